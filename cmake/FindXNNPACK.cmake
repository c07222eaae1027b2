# Finds Debian's XNNPACK (libxnnpack-dev), which ships no CMake package:
# xnnpack.h + libXNNPACK, plus pthreadpool.h (libpthreadpool-dev), which
# xnnpack.h includes. Defines XNNPACK_FOUND and the imported target XNNPACK::XNNPACK.
#
# EA_XNNPACK_ROOT (optional): a folder with XNNPACK unpacked into it
# (<root>/usr/include, <root>/usr/lib/<arch>), e.g. Debian's arm64 packages
# extracted with dpkg-deb -x for the aarch64 cross build: they are not
# Multi-Arch: same, so they cannot be installed next to the amd64 ones
# (scripts/stages/40-arm.sh).
# The folder is put first in CMAKE_FIND_ROOT_PATH for the searches below, so
# its headers win over a native libxnnpack-dev's /usr/include (the headers
# must match the library found). It is not passed as HINTS: with
# CMAKE_FIND_ROOT_PATH_MODE_* ONLY (the cross toolchain files) CMake re-roots
# hints under the other roots, and nothing is found.
set(_ea_xnnpack_saved_roots "${CMAKE_FIND_ROOT_PATH}")
if(EA_XNNPACK_ROOT)
  get_filename_component(_ea_xnnpack_root "${EA_XNNPACK_ROOT}" ABSOLUTE)
  list(PREPEND CMAKE_FIND_ROOT_PATH "${_ea_xnnpack_root}")
else()
  set(_ea_xnnpack_root "")
endif()
# Search again when the root changed since the last configure (the results are
# cached; a header found earlier elsewhere would otherwise stick).
if(NOT "${_EA_XNNPACK_ROOT_SEARCHED}" STREQUAL "${_ea_xnnpack_root}")
  unset(XNNPACK_INCLUDE_DIR CACHE)
  unset(XNNPACK_PTHREADPOOL_INCLUDE_DIR CACHE)
  unset(XNNPACK_LIBRARY CACHE)
endif()
set(_EA_XNNPACK_ROOT_SEARCHED "${_ea_xnnpack_root}" CACHE INTERNAL "EA_XNNPACK_ROOT of the last XNNPACK search")

find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
find_path(XNNPACK_PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
find_library(XNNPACK_LIBRARY NAMES XNNPACK xnnpack)
set(CMAKE_FIND_ROOT_PATH "${_ea_xnnpack_saved_roots}")
unset(_ea_xnnpack_saved_roots)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XNNPACK
  REQUIRED_VARS XNNPACK_LIBRARY XNNPACK_INCLUDE_DIR XNNPACK_PTHREADPOOL_INCLUDE_DIR)

if(XNNPACK_FOUND AND NOT TARGET XNNPACK::XNNPACK)
  add_library(XNNPACK::XNNPACK UNKNOWN IMPORTED)
  set_target_properties(XNNPACK::XNNPACK PROPERTIES
    IMPORTED_LOCATION "${XNNPACK_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XNNPACK_INCLUDE_DIR};${XNNPACK_PTHREADPOOL_INCLUDE_DIR}")
  if(_ea_xnnpack_root)
    # libXNNPACK.so loads libpthreadpool.so.0 from the same unpacked folder,
    # which is not on the loader's search path. CMake's build-tree rpath names
    # that folder, but as DT_RUNPATH (the linker's default) it only serves the
    # executable's own DT_NEEDED entries, not those of libXNNPACK. As DT_RPATH
    # (--disable-new-dtags) it serves them too, so every run works without
    # LD_LIBRARY_PATH: ctest's and gtest_discover_tests' qemu runs and
    # edgeattn-bench started by hand. The rpath also lets the linker find
    # libpthreadpool.so.0 when it checks libXNNPACK's dependencies.
    set_property(TARGET XNNPACK::XNNPACK APPEND PROPERTY
      INTERFACE_LINK_OPTIONS "LINKER:--disable-new-dtags")
  endif()
endif()
unset(_ea_xnnpack_root)
mark_as_advanced(XNNPACK_INCLUDE_DIR XNNPACK_PTHREADPOOL_INCLUDE_DIR XNNPACK_LIBRARY)
