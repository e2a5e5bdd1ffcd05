# scanlab build rules, shared by handout/CMakeLists.txt (the student's build) and the
# repository's CMakeLists.txt (reference + handout + tests).
#
#   scanlab_add_driver(<target> STUDENT_ROOT <dir> BACKEND cuda|emulator|emulator-profile)
#     The driver program built from harness/host/driver.cu, with the student files taken
#     from <dir>/student/ (the handout's own, solution/, or a submission).
#     emulator-profile: the emulator driver whose kernels count their memory requests,
#     bank conflicts and barriers (emulator/emu_profile_hooks.cpp; `run` prints them).
#   scanlab_link_student_unit(<target> STUDENT_ROOT <dir> BACKEND cuda|emulator)
#     Links those student files, as a unit of their own, into <target> (a test).
#   scanlab_add_isolation_drivers(<emulator driver> STUDENT_ROOT <dir>)
#     For each folder F of harness/isolation/: <driver>-with-harness-F, the same
#     student files except F's, which is the harness's own (not built by default;
#     `make grade-local` builds them, `scanlab grade --student DIR` runs them).
#   scanlab_add_unit_library(<target> STUDENT_ROOT <dir>)
#     The student unit of <dir>/student/ as a shared object that exports
#     scanlab::student::unitEntry alone (harness/host/unit_entry.h), CUDA only.
#   scanlab_add_unit_loader(<target> DRIVER <driver>)
#     <driver>'s harness with the student units loaded at run time from the shared objects
#     that SCANLAB_UNITS names (harness/host/unit_loader.cu), CUDA only: the grader's one
#     profiling process for every task build.
#
# Options: SCANLAB_CUDA (default ON when nvcc is found), SCANLAB_EMULATOR (default
# ON), SCANLAB_CUB_BASELINE (default OFF: CUB's scan as a baseline of task 4),
# CMAKE_CUDA_ARCHITECTURES (set by the including project).
include_guard(GLOBAL)
# The assignment's lists (tasks, operators, student files, exit codes), generated from
# data/assignment.toml by tools/make_handout.py.
include("${CMAKE_CURRENT_LIST_DIR}/assignment.cmake")

set(SCANLAB_HANDOUT_DIR "${CMAKE_CURRENT_LIST_DIR}/.." CACHE INTERNAL "")
get_filename_component(SCANLAB_HANDOUT_DIR "${SCANLAB_HANDOUT_DIR}" ABSOLUTE)

option(SCANLAB_CUDA "Build the CUDA drivers (needs nvcc)" ON)
option(SCANLAB_EMULATOR "Build the CPU emulator drivers (needs libboost-context-dev)" ON)
option(SCANLAB_CUB_BASELINE "CUDA drivers also time CUB's scan as the 'cub' baseline of task 4 (slower to build)" OFF)

set(SCANLAB_HAVE_CUDA OFF)
if(SCANLAB_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(SCANLAB_HAVE_CUDA ON)
  else()
    message(STATUS "scanlab: no CUDA compiler found: building the CPU emulator only")
  endif()
endif()

if(SCANLAB_EMULATOR AND NOT TARGET scanlab_emulator)
  add_subdirectory("${SCANLAB_HANDOUT_DIR}/emulator" "${CMAKE_BINARY_DIR}/scanlab_emulator")
endif()

# The profile build's instrumentation (emulator-profile): the student unit, and the
# harness object too, since a template both instantiate (a placeholder of
# harness/baselines.cuh, which the harness also times) is linked from the harness's
# object: uninstrumented, its loads and stores would not be counted. The hooks count
# only what runs inside a kernel.
set(SCANLAB_PROFILE_FLAGS -O2 -fsanitize=kernel-address
    --param=asan-instrumentation-with-call-threshold=0 --param=asan-stack=0
    --param=asan-globals=0 --param=asan-use-after-return=0)

# The emulator's bounds and race checks (emulator/emu_bounds.h, emulator/emu_race.h): every
# load and store of the student unit calls a hook (ThreadSanitizer's calls, which the
# emulator defines: no sanitizer runtime is linked) that stops a kernel at an access outside
# its buffer and watches shared memory for races; -g1 gives the line tables that name the
# student's line. ThreadSanitizer's pass, unlike AddressSanitizer's, calls a hook for every
# access (in `sh[i] = sh[i - 1] + sh[i]`, the store too). g++ only (the profile build's
# flags are g++'s too); not with AddressSanitizer or ThreadSanitizer itself (`make emu-asan`).
set(SCANLAB_EMU_CHECK_FLAGS)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize=(address|thread)")
  set(SCANLAB_EMU_CHECK_FLAGS -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
      -Wno-tsan -g1)
endif()

# The student unit: harness/host/student_unit.cu with the student files of <dir>/student/,
# an OBJECT library <target>-student of its own (see harness/host/student_api.h for why),
# whose objects are added to <target> after its own sources: the harness's (or a
# test's) object comes first on the link line.
#   scanlab_link_student_unit(<target> STUDENT_ROOT <dir> BACKEND cuda|emulator)
function(scanlab_link_student_unit target)
  cmake_parse_arguments(ARG "" "STUDENT_ROOT;BACKEND" "" ${ARGN})
  set(unit ${target}-student)
  if(ARG_BACKEND STREQUAL "cuda")
    add_library(${unit} OBJECT "${SCANLAB_HANDOUT_DIR}/harness/host/student_unit.cu")
    _scanlab_cuda_options(${unit})
    # Position-independent, so that the grader links the same object into a shared one for
    # its profiling run (scanlab_add_unit_library); the device code is the same.
    set_target_properties(${unit} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  else()
    add_library(${unit} OBJECT "${SCANLAB_HANDOUT_DIR}/emulator/student_unit_emu.cpp")
    target_link_libraries(${unit} PRIVATE scanlab_emulator)
    if(NOT ARG_BACKEND STREQUAL "emulator-profile")
      target_compile_options(${unit} PRIVATE ${SCANLAB_EMU_CHECK_FLAGS})
    endif()
    # The student unit's writable data in a section of its own, which the harness puts
    # back as it was loaded before every launch of its kernels (emulator/student_state.ld,
    # harness/host/student_state.h).
    # -z now -z norelro: the same layout on every toolchain. Where the linker binds now by
    # default (Ubuntu), the default script ends the read-only-after-relocation segment
    # (RELRO) at .data, and the section placed before .data fell into it: the first
    # restore then wrote to a read-only page (a segfault in memcpy on every run).
    target_link_options(${target} PRIVATE "LINKER:-T,${SCANLAB_HANDOUT_DIR}/emulator/student_state.ld"
                        "LINKER:-z,now" "LINKER:-z,norelro")
    if(ARG_BACKEND STREQUAL "emulator-profile")
      # Every load and store calls a hook of emu_profile_hooks.cpp (the kernel address
      # sanitizer's calls, which no runtime library provides; they check bounds too);
      # optimized as students build; -g1 for the lines of the bounds check's messages.
      target_compile_options(${unit} PRIVATE ${SCANLAB_PROFILE_FLAGS} -g1)
      target_sources(${target} PRIVATE $<TARGET_OBJECTS:scanlab_emulator_profile_hooks>)
    endif()
    scanlab_emu_extern_shared(${target} ${unit})
  endif()
  # The student root comes first, so its student/*.cuh are the ones compiled.
  target_include_directories(${unit} BEFORE PRIVATE "${ARG_STUDENT_ROOT}" "${SCANLAB_HANDOUT_DIR}")
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:${unit}>)
endfunction()

# The `extern __shared__` arrays of the emulator OBJECT library <unit> (linked into
# <target>), defined from its object by emu_extern_shared.cmake.
function(scanlab_emu_extern_shared target unit)
  set(extern_shared "${CMAKE_CURRENT_BINARY_DIR}/${target}-extern-shared.cpp")
  add_custom_command(OUTPUT "${extern_shared}"
    COMMAND "${CMAKE_COMMAND}" "-DOBJECT=$<TARGET_OBJECTS:${unit}>" "-DREADELF=${CMAKE_READELF}"
            "-DOUT=${extern_shared}" -P "${SCANLAB_HANDOUT_DIR}/cmake/emu_extern_shared.cmake"
    DEPENDS ${unit} "$<TARGET_OBJECTS:${unit}>" "${SCANLAB_HANDOUT_DIR}/cmake/emu_extern_shared.cmake"
    VERBATIM)
  target_sources(${target} PRIVATE "${extern_shared}")
  target_link_libraries(${target} PRIVATE scanlab_emulator)
endfunction()

# nvcc's C++ standard, the assignment's one (data/assignment.toml [language]), as its flag:
# CMake 3.25 (Debian 12) knows no CUDA20 dialect, should the standard ever move up.
function(scanlab_cuda_standard target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++${SCANLAB_CXX_STANDARD}>)
endfunction()

function(_scanlab_cuda_options target)
  scanlab_cuda_standard(${target})
  # -lineinfo: compute-sanitizer and error messages name source lines.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  # -split-compile=4: nvcc's optimizing passes (cicc, ptxas) in 4 threads. The machine code
  # is the same (the kernels' sections of the lookback scan's unit byte for byte); the
  # grade's longest compile, that unit's, took 3.2 s in place of 3.7 s on 2 cores. Not 0
  # (a thread per core): a grader builds as many units at once as it has cores, as one
  # sandbox user whose threads are counted (grader/grading/sandbox.py PROCESSES).
  if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 11.8)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-split-compile=4>)
  endif()
endfunction()

# The driver: the harness (harness/host/driver.cu, which never sees a student file) linked
# FIRST, then the student unit, so that where both define an inline function or
# template instance the linker keeps the harness's. <target>.objects (in the build
# folder) names both objects and the student unit's source, for the grader's checks.
function(scanlab_add_driver target)
  cmake_parse_arguments(ARG "" "STUDENT_ROOT;BACKEND" "" ${ARGN})
  if(ARG_BACKEND STREQUAL "cuda")
    if(NOT SCANLAB_HAVE_CUDA)
      return()
    endif()
    add_library(${target}-harness OBJECT "${SCANLAB_HANDOUT_DIR}/harness/host/driver.cu")
    if(SCANLAB_CUB_BASELINE)
      target_sources(${target}-harness PRIVATE "${SCANLAB_HANDOUT_DIR}/harness/host/cub_baseline.cu")
      target_compile_definitions(${target}-harness PRIVATE SCANLAB_CUB_BASELINE)
    endif()
    _scanlab_cuda_options(${target}-harness)
  elseif(ARG_BACKEND MATCHES "^emulator(-profile)?$")
    if(NOT SCANLAB_EMULATOR)
      return()
    endif()
    add_library(${target}-harness OBJECT "${SCANLAB_HANDOUT_DIR}/emulator/driver_emu.cpp")
    target_link_libraries(${target}-harness PRIVATE scanlab_emulator)
    if(ARG_BACKEND STREQUAL "emulator-profile")
      target_compile_options(${target}-harness PRIVATE ${SCANLAB_PROFILE_FLAGS})
    endif()
  else()
    message(FATAL_ERROR "scanlab_add_driver: BACKEND must be cuda, emulator or emulator-profile")
  endif()
  target_include_directories(${target}-harness PRIVATE "${SCANLAB_HANDOUT_DIR}")
  add_executable(${target} $<TARGET_OBJECTS:${target}-harness>)
  scanlab_link_student_unit(${target} STUDENT_ROOT "${ARG_STUDENT_ROOT}" BACKEND ${ARG_BACKEND})
  if(ARG_BACKEND STREQUAL "cuda")
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CUDA)
  else()
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
    target_link_libraries(${target} PRIVATE scanlab_emulator)
  endif()
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/${target}.objects"
       CONTENT "harness $<TARGET_OBJECTS:${target}-harness>\nstudent $<TARGET_OBJECTS:${target}-student>\nunit $<TARGET_PROPERTY:${target}-student,SOURCES>\n")
endfunction()

# The drivers that `grade` runs a task again with (harness/host/isolation.h): the student's
# files with one of them replaced by the harness's version in harness/isolation/<F>/,
# whose folder comes first on the include path. They reuse <driver>'s harness object.
function(scanlab_add_isolation_drivers driver)
  cmake_parse_arguments(ARG "" "STUDENT_ROOT" "" ${ARGN})
  if(NOT TARGET ${driver})
    return()
  endif()
  file(GLOB roots LIST_DIRECTORIES true "${SCANLAB_HANDOUT_DIR}/harness/isolation/*")
  foreach(root ${roots})
    if(NOT IS_DIRECTORY "${root}/student")
      continue()
    endif()
    get_filename_component(stem "${root}" NAME)
    set(t ${driver}-with-harness-${stem})
    add_executable(${t} $<TARGET_OBJECTS:${driver}-harness>)
    scanlab_link_student_unit(${t} STUDENT_ROOT "${ARG_STUDENT_ROOT}" BACKEND emulator)
    target_include_directories(${t}-student BEFORE PRIVATE "${root}")
    set_target_properties(${t} PROPERTIES LINKER_LANGUAGE CXX EXCLUDE_FROM_ALL ON)
    set_target_properties(${t}-student PROPERTIES EXCLUDE_FROM_ALL ON)
    target_link_libraries(${t} PRIVATE scanlab_emulator)
  endforeach()
endfunction()

# The student unit as a shared object (scanlab_add_unit_library, see the top), linked to
# the shared CUDA runtime, which the loader's program shares: one context for every unit.
function(scanlab_add_unit_library target)
  cmake_parse_arguments(ARG "" "STUDENT_ROOT" "" ${ARGN})
  if(NOT SCANLAB_HAVE_CUDA)
    return()
  endif()
  add_library(${target} SHARED "${SCANLAB_HANDOUT_DIR}/harness/host/student_unit.cu")
  _scanlab_cuda_options(${target})
  target_include_directories(${target} BEFORE PRIVATE "${ARG_STUDENT_ROOT}" "${SCANLAB_HANDOUT_DIR}")
  set_target_properties(${target} PROPERTIES PREFIX "" CUDA_RUNTIME_LIBRARY Shared)
  target_link_options(${target} PRIVATE
                      "LINKER:--version-script=${SCANLAB_HANDOUT_DIR}/harness/host/unit_exports.map")
endfunction()

# The unit loader (scanlab_add_unit_loader, see the top): it exports its own symbols, so
# that the units' calls of scanlab_kernel_launched reach its count.
function(scanlab_add_unit_loader target)
  cmake_parse_arguments(ARG "" "DRIVER" "" ${ARGN})
  if(NOT SCANLAB_HAVE_CUDA OR NOT TARGET ${ARG_DRIVER}-harness)
    return()
  endif()
  add_executable(${target} $<TARGET_OBJECTS:${ARG_DRIVER}-harness>
                 "${SCANLAB_HANDOUT_DIR}/harness/host/unit_loader.cu")
  _scanlab_cuda_options(${target})
  target_include_directories(${target} PRIVATE "${SCANLAB_HANDOUT_DIR}")
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CUDA CUDA_RUNTIME_LIBRARY Shared
                        ENABLE_EXPORTS ON)
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
endfunction()
