"""What a timed task's Nsight Compute figures say, beside the reference's, in the lecture's
words. The words and thresholds are data/diagnoses.toml's, which the emulator's `make
profile` says too (handout/harness/generated/diagnoses.h): one source of truth."""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .. import REPO_ROOT
from ..results import ProfileFigures

DIAGNOSES_PATH = REPO_ROOT / "data" / "diagnoses.toml"


@dataclass(frozen=True)
class Diagnosis:
    id: str
    text: str                    # with {figure} and {figure:.Nf} fields
    figures: tuple[str, ...]
    advice: str
    threshold: float

    def say(self, **figures: object) -> str:
        said = self.text.format(**figures)
        return f"{said}: {self.advice}" if self.advice else said


@dataclass(frozen=True)
class Diagnoses:
    by_id: dict[str, Diagnosis]
    stall_words: dict[str, str]

    def __getitem__(self, key: str) -> Diagnosis:
        return self.by_id[key]


def load(path: Path = DIAGNOSES_PATH) -> Diagnoses:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    table = {}
    for d in data.get("diagnosis", []):
        table[d["id"]] = Diagnosis(d["id"], d["text"], tuple(d.get("figures", ())), d.get("advice", ""),
                                   float(d.get("threshold", 0)))
    return Diagnoses(table, {str(k): str(v) for k, v in data.get("stall", {}).items()})


@functools.cache
def default() -> Diagnoses:
    return load()


def diagnose(student: ProfileFigures, reference: ProfileFigures | None,
             table: Diagnoses | None = None) -> list[str]:
    """The diagnoses of a task's figures, most telling first: coalescing (against the
    sectors its bytes need), bank conflicts, occupancy and DRAM throughput (against the
    reference's), or that nothing differs from the reference's; then the top warp stall."""
    t = table or default()
    said: list[str] = []
    for kind, value, ideal in (
            ("loads", student.load_sectors_per_request, student.load_ideal_sectors_per_request),
            ("stores", student.store_sectors_per_request, student.store_ideal_sectors_per_request)):
        d = t[f"uncoalesced-{kind}"]
        if value is not None and ideal and value >= d.threshold * ideal:
            said.append(d.say(value=value, ideal=ideal))
    d = t["bank-conflicts"]
    ways = student.shared_wavefronts_per_request
    ref_ways = reference.shared_wavefronts_per_request if reference else None
    if ways is not None and ways >= d.threshold and (ref_ways is None or ways >= ref_ways + 0.5):
        said.append(d.say(value=ways))
    d = t["occupancy"]
    occ, ref_occ = student.theoretical_occupancy_pct, reference.theoretical_occupancy_pct if reference else None
    if occ is not None and ref_occ and occ < d.threshold / 100 * ref_occ and student.occupancy_limiter:
        limiter = student.occupancy_limiter
        if limiter == "registers" and student.registers_per_thread:
            limiter += f" ({student.registers_per_thread:.0f} a thread)"
        elif limiter == "shared memory" and student.shared_bytes_per_block is not None:
            limiter += f" ({student.shared_bytes_per_block:.0f} bytes a block)"
        said.append(d.say(blocks=student.blocks_per_sm or 0, threads=student.threads_per_block or 0,
                          value=occ, achieved=student.achieved_occupancy_pct or 0, reference=ref_occ,
                          limiter=limiter))
    d = t["dram-idle"]
    dram, ref_dram = student.dram_pct, reference.dram_pct if reference else None
    if dram is not None and ref_dram and dram < d.threshold / 100 * ref_dram:
        said.append(d.say(value=dram, reference=ref_dram))
    if not said and reference is not None:
        said.append(t["like-reference"].say())
    d = t["stall"]
    top = next(iter(student.top_stalls(1)), None)
    if top and top[1] >= d.threshold:
        said.append(d.say(reason=t.stall_words.get(top[0], top[0].replace("_", " ")), value=top[1]))
    return said
