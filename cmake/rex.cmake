# SPDX-License-Identifier: MIT
#
# The build pieces every chapter uses:
#   rex_target_defaults(TARGET)  warnings, C11, sanitizers for one of our targets
#   rex_unit_test(NAME SOURCE [LIBS...])   a hardware-free test executable
#   rex_chapter(NAME ...)        a chapter: two programs, unit tests, a page
#   rex_pair_test(NAME ...)      an end-to-end server/client run on RDMA
#   rex_rdma_test(NAME...)       label rdma, skip on 77, and the leak check

set(REX_PAIR_RUNNER ${PROJECT_SOURCE_DIR}/tests/pair-runner.sh)
# "cmake --build build --target programs": the chapters' programs alone, no
# tests (the Vagrantfile's VMs build only these).
add_custom_target(programs)
# Each end-to-end test gets a port of its own so tests can run in parallel.
set_property(GLOBAL PROPERTY REX_NEXT_PORT 20900)

# rex_rdma_test(<test names...>): what every end-to-end test has. Label
# "rdma", exit 77 counts as skipped (no RDMA device), and the leak check:
# each of our programs the test runs is checked at its exit for QPs, CQs,
# MRs, PDs and CM ids it still holds, and fails (exit 1) naming them
# (tests/leakcheck/leakcheck.c, preloaded). Other labels and properties are
# the caller's.
function(rex_rdma_test)
  foreach(name ${ARGN})
    set_property(TEST ${name} APPEND PROPERTY LABELS rdma)
    set_property(TEST ${name} PROPERTY SKIP_RETURN_CODE 77)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
                 LD_PRELOAD=$<TARGET_FILE:rex_leakcheck>
                 REX_LEAKCHECK_ROOT=${CMAKE_BINARY_DIR}
                 # The sanitizer tree: ASan would refuse a preload before it.
                 ASAN_OPTIONS=verify_asan_link_order=0)
  endforeach()
endfunction()

function(rex_target_defaults target)
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes)
  if(REX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(REX_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# rex_unit_test(<test name> <source> [libraries...])
# One executable per behaviour, label "unit"; no RDMA device needed.
function(rex_unit_test name source)
  string(REPLACE "." "_" exe "test_${name}")
  string(REPLACE "-" "_" exe "${exe}")
  add_executable(${exe} ${source})
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${exe} PRIVATE ${ARGN})
  rex_target_defaults(${exe})
  add_test(NAME ${name} COMMAND ${exe})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 30)
endfunction()

# rex_chapter(<NN-topic>
#             [SERVER <sources...>] [CLIENT <sources...>]
#             [SHARED <sources...>]      compiled into both programs and the unit tests
#             [UNIT_TESTS <sources...>]  tests/<NN-topic>/test_<what>.c -> test <NN-topic>.<what>
#             [PAGE <docs pages...>])     its walkthrough, one page or several, in reading order
# Builds build/bin/<NN-topic>-server and build/bin/<NN-topic>-client, each
# when its sources are given (a chapter may start with other programs only),
# and makes them part of the target "programs".
function(rex_chapter name)
  cmake_parse_arguments(CH "" "" "SERVER;CLIENT;SHARED;UNIT_TESTS;PAGE" ${ARGN})
  set(libs rex_common PkgConfig::RDMACM PkgConfig::IBVERBS)
  if(CH_SHARED)
    add_library(${name}-shared STATIC ${CH_SHARED})
    target_include_directories(${name}-shared PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${name}-shared PUBLIC ${libs})
    rex_target_defaults(${name}-shared)
    set(libs ${name}-shared ${libs})
  endif()
  foreach(side server client)
    string(TOUPPER ${side} SIDE)
    if(NOT CH_${SIDE})
      continue()
    endif()
    add_executable(${name}-${side} ${CH_${SIDE}})
    target_link_libraries(${name}-${side} PRIVATE ${libs})
    rex_target_defaults(${name}-${side})
    add_dependencies(programs ${name}-${side})
  endforeach()
  foreach(src ${CH_UNIT_TESTS})
    get_filename_component(stem ${src} NAME_WE)
    string(REGEX REPLACE "^test_" "" what ${stem})
    rex_unit_test(${name}.${what} ${src} ${libs})
  endforeach()
  foreach(page ${CH_PAGE})
    set_property(GLOBAL APPEND PROPERTY REX_DOC_PAGES ${CMAKE_CURRENT_SOURCE_DIR}/${page})
  endforeach()
endfunction()

# rex_pair_test(<test name>
#   [SERVER <program> <args...>]  [CLIENT <program> <args...>]
#   [SERVER_EXIT <code>] [CLIENT_EXIT <code>]      expected exit codes (default 0)
#   [SERVER_EXPECT <regex>...] [CLIENT_EXPECT <regex>...]  lines that must appear
#   [CLIENT_WITHIN <seconds>]                      the client must finish this fast
#   [CLIENT_WITHIN_FROM <regex>]                   ... counted from its first line matching
#   [PROVIDER siw]                                 a Soft-iWARP test: label siw, not rdma
#   [TIMEOUT <seconds>])                           the whole test (default 120)
# <program> is a target name such as 01-connect-client. In arguments, @ADDR@
# becomes the lab's RDMA address and @PORT@ a port unique to this test.
# Mind that CMake splits arguments at semicolons (they separate list items):
# write shell snippets without ";" (use && or newlines).
# Label "rdma"; exit 77 (skipped) when no RDMA device or address is available.
# PROVIDER siw: label "siw" instead, run only in the Soft-iWARP lab
# (RDMA_LAB_PROVIDER=siw scripts/lab run -- ctest --test-dir build -L siw),
# skipped where no iWARP device is.
function(rex_pair_test name)
  cmake_parse_arguments(PT "" "SERVER_EXIT;CLIENT_EXIT;CLIENT_WITHIN;CLIENT_WITHIN_FROM;TIMEOUT;PROVIDER"
                        "SERVER;CLIENT;SERVER_EXPECT;CLIENT_EXPECT" ${ARGN})
  get_property(port GLOBAL PROPERTY REX_NEXT_PORT)
  math(EXPR next "${port} + 1")
  set_property(GLOBAL PROPERTY REX_NEXT_PORT ${next})
  if(NOT PT_TIMEOUT)
    set(PT_TIMEOUT 120)
  endif()
  set(args --port ${port} --timeout ${PT_TIMEOUT})
  foreach(side SERVER CLIENT)
    string(TOLOWER ${side} flag)
    if(PT_${side})
      list(POP_FRONT PT_${side} prog)
      list(APPEND args --${flag} $<TARGET_FILE:${prog}> ${PT_${side}} --end)
    endif()
    if(DEFINED PT_${side}_EXIT)
      list(APPEND args --${flag}-exit ${PT_${side}_EXIT})
    endif()
    foreach(re ${PT_${side}_EXPECT})
      list(APPEND args --${flag}-expect ${re})
    endforeach()
  endforeach()
  if(PT_CLIENT_WITHIN)
    list(APPEND args --client-within ${PT_CLIENT_WITHIN})
  endif()
  if(PT_CLIENT_WITHIN_FROM)
    list(APPEND args --client-within-from ${PT_CLIENT_WITHIN_FROM})
  endif()
  if(PT_PROVIDER)
    list(APPEND args --provider ${PT_PROVIDER})
  endif()
  add_test(NAME ${name} COMMAND ${REX_PAIR_RUNNER} ${args})
  math(EXPR ctest_timeout "${PT_TIMEOUT} + 30")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ctest_timeout})
  rex_rdma_test(${name})
  if(PT_PROVIDER STREQUAL "siw")
    set_tests_properties(${name} PROPERTIES LABELS siw)
  elseif(PT_PROVIDER)
    message(FATAL_ERROR "rex_pair_test(${name}): PROVIDER must be siw, not ${PT_PROVIDER}")
  endif()
endfunction()
