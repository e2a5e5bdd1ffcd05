"""make bench's set-up step (bench/cccl_setup.sh): the newest CCCL headers from a
nvidia-cuda-cccl wheel, for a machine without network (CCCL_WHEEL) too. No GPU needed:
what it unpacks and prints is checked, not the benchmark."""
from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

from conftest import REPO

SETUP = REPO / "bench" / "cccl_setup.sh"


def _wheel(folder: Path, version: str = "13.3.5.0.6") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"nvidia_cuda_cccl-{version}-py3-none-manylinux2014_x86_64.whl"
    with zipfile.ZipFile(path, "w") as z:   # the real wheel's layout (nvidia/cu13/include/cccl)
        z.writestr("nvidia/cu13/include/cccl/cub/version.cuh", "#define CUB_VERSION 300500\n")
        z.writestr("nvidia/cu13/include/cccl/cuda/std/version", "// libcu++\n")
        z.writestr("nvidia/cu13/cccl/lib/libsomething.so", "not a header")
        z.writestr(f"nvidia_cuda_cccl-{version}.dist-info/METADATA", "Name: nvidia-cuda-cccl\n")
    return path


def _setup(dest: Path, **env: str) -> subprocess.CompletedProcess[str]:
    run_env = {k: v for k, v in os.environ.items() if k not in ("CCCL_WHEEL", "CCCL_DIR")}
    return subprocess.run(["bash", str(SETUP), str(dest)], capture_output=True, text=True, cwd=REPO,
                          env={**run_env, **env}, timeout=300)


def test_a_wheel_given_is_unpacked_headers_only(tmp_path):
    wheels = tmp_path / "wheels"
    _wheel(wheels, "13.0.1.0.0")
    _wheel(wheels)                      # the newest of a folder is taken
    r = _setup(tmp_path / "cccl", CCCL_WHEEL=str(wheels))
    include = Path(r.stdout.strip())
    assert r.returncode == 0, r.stderr
    assert include.name == "cccl" and (include / "cub" / "version.cuh").is_file()
    assert "13.3.5.0.6" in str(include)
    assert not list((tmp_path / "cccl").rglob("*.so"))   # headers only
    # Again: unpacked already, the same folder.
    assert _setup(tmp_path / "cccl", CCCL_WHEEL=str(wheels)).stdout.strip() == str(include)


def test_a_headers_folder_given_is_used_as_it_is(tmp_path):
    (tmp_path / "inc" / "cub").mkdir(parents=True)
    (tmp_path / "inc" / "cub" / "version.cuh").write_text("#define CUB_VERSION 300500\n")
    assert _setup(tmp_path / "cccl", CCCL_DIR=str(tmp_path / "inc")).stdout.strip() == str(tmp_path / "inc")
    r = _setup(tmp_path / "cccl", CCCL_DIR=str(tmp_path))
    assert r.stdout == "" and "holds no cub/version.cuh" in r.stderr   # then the toolkit's CUB alone
