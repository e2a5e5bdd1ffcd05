# scanlab build rules, shared by handout/CMakeLists.txt (the student's build) and the
# repository's CMakeLists.txt (reference + handout + tests).
#
#   scanlab_add_driver(<target> STUDENT_ROOT <dir> BACKEND cuda|emulator)
#     The driver program built from harness/driver.cu, with the student files taken
#     from <dir>/student/ (the handout's own, solution/, or a submission).
#
# Options: SCANLAB_CUDA (default ON when nvcc is found), SCANLAB_EMULATOR (default
# ON), CMAKE_CUDA_ARCHITECTURES (set by the including project).
include_guard(GLOBAL)
# The assignment's lists (tasks, operators, student files, exit codes), generated from
# data/assignment.toml by tools/make_handout.py.
include("${CMAKE_CURRENT_LIST_DIR}/assignment.cmake")

set(SCANLAB_HANDOUT_DIR "${CMAKE_CURRENT_LIST_DIR}/.." CACHE INTERNAL "")
get_filename_component(SCANLAB_HANDOUT_DIR "${SCANLAB_HANDOUT_DIR}" ABSOLUTE)

option(SCANLAB_CUDA "Build the CUDA drivers (needs nvcc)" ON)
option(SCANLAB_EMULATOR "Build the CPU emulator drivers (needs libboost-context-dev)" ON)

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

function(scanlab_add_driver target)
  cmake_parse_arguments(ARG "" "STUDENT_ROOT;BACKEND" "" ${ARGN})
  if(ARG_BACKEND STREQUAL "cuda")
    if(NOT SCANLAB_HAVE_CUDA)
      return()
    endif()
    add_executable(${target} "${SCANLAB_HANDOUT_DIR}/harness/driver.cu")
    set_target_properties(${target} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
    # -lineinfo: compute-sanitizer and error messages name source lines.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  elseif(ARG_BACKEND STREQUAL "emulator")
    if(NOT SCANLAB_EMULATOR)
      return()
    endif()
    add_executable(${target} "${SCANLAB_HANDOUT_DIR}/emulator/driver_emu.cpp")
    target_link_libraries(${target} PRIVATE scanlab_emulator)
  else()
    message(FATAL_ERROR "scanlab_add_driver: BACKEND must be cuda or emulator")
  endif()
  # The student root comes first, so its student/*.cuh are the ones compiled.
  target_include_directories(${target} BEFORE PRIVATE "${ARG_STUDENT_ROOT}" "${SCANLAB_HANDOUT_DIR}")
endfunction()
