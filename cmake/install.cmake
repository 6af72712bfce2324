# Install layout of FreeDNN (included at the end of the top-level CMakeLists.txt):
#   include/                 every public header (cudnn*.h, freednn.h)
#   lib/                     libcudnn.so.8.9.7 + links, the six v8 sub-libraries, libcudnn_static.a
#   bin/freednn              the tools
#   lib/pkgconfig/           cudnn.pc, freednn.pc (prefix relative to ${pcfiledir})
#   lib/cmake/FreeDNN/       FreeDNNConfig.cmake (+ version): FreeDNN::cudnn, FreeDNN::cudnn_static, CUDNN::cudnn
#   lib/cmake/CUDNN/         CUDNNConfig.cmake so that find_package(CUDNN) works
#   share/freednn/SHA256SUMS checksums of every installed file (checked by `freednn verify`)
# The tree is relocatable: libraries and freednn find each other through RUNPATH $ORIGIN.
include(CMakePackageConfigHelpers)

set(FREEDNN_CUDNN_VERSION 8.9.7)
set(FREEDNN_PKG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/FreeDNN)

# RUNPATH (not RPATH), so LD_LIBRARY_PATH still wins as with NVIDIA's libraries
set(FREEDNN_INSTALL_TARGETS cudnn cudnn_static)
foreach(sub ${FREEDNN_SUBLIBS})
  list(APPEND FREEDNN_INSTALL_TARGETS cudnn_${sub})
endforeach()
foreach(t cudnn ${FREEDNN_SUBLIBS})
  if(t STREQUAL "cudnn")
    target_link_options(cudnn PRIVATE "-Wl,--enable-new-dtags")
  else()
    target_link_options(cudnn_${t} PRIVATE "-Wl,--enable-new-dtags")
  endif()
endforeach()
if(TARGET freednn)
  # DT_RPATH on purpose: freednn must run with its own FreeDNN even when LD_LIBRARY_PATH points
  # at a broken or foreign libcudnn (diagnosing that is what the doctor is for)
  target_link_options(freednn PRIVATE "-Wl,--disable-new-dtags")
endif()

install(TARGETS ${FREEDNN_INSTALL_TARGETS} EXPORT FreeDNNTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET freednn)
  install(TARGETS freednn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
file(GLOB FREEDNN_INSTALL_HEADERS ${PROJECT_SOURCE_DIR}/include/*.h)
install(FILES ${FREEDNN_INSTALL_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# ---------------------------------------------------------------- CMake packages
set(FREEDNN_CONFIG_DEPS "")
if(OpenMP_C_FOUND)
  string(APPEND FREEDNN_CONFIG_DEPS "find_dependency(OpenMP COMPONENTS C)\n")
endif()
if(FREEDNN_HAVE_CUDA)
  string(APPEND FREEDNN_CONFIG_DEPS "find_dependency(CUDAToolkit)\n")
endif()
install(EXPORT FreeDNNTargets NAMESPACE FreeDNN:: DESTINATION ${FREEDNN_PKG_DIR} FILE FreeDNNTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/FreeDNNConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pkg/FreeDNNConfig.cmake INSTALL_DESTINATION ${FREEDNN_PKG_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pkg/FreeDNNConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pkg/FreeDNNConfig.cmake ${PROJECT_BINARY_DIR}/pkg/FreeDNNConfigVersion.cmake
        DESTINATION ${FREEDNN_PKG_DIR})
# find_package(CUDNN [8]) -> the cuDNN API version FreeDNN implements
configure_file(${PROJECT_SOURCE_DIR}/cmake/CUDNNConfig.cmake.in ${PROJECT_BINARY_DIR}/pkg/CUDNNConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pkg/CUDNNConfigVersion.cmake
  VERSION ${FREEDNN_CUDNN_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pkg/CUDNNConfig.cmake ${PROJECT_BINARY_DIR}/pkg/CUDNNConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/CUDNN)

# ---------------------------------------------------------------- pkg-config
set(FREEDNN_PC_PRIVATE "-lm -lpthread -ldl")
if(OpenMP_C_FOUND)
  string(APPEND FREEDNN_PC_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
if(FREEDNN_HAVE_CBLAS)
  string(APPEND FREEDNN_PC_PRIVATE " ${FREEDNN_OPENBLAS_LIB}")
endif()
if(FREEDNN_HAVE_CUDA)
  # the static library carries the CUDA backend, which needs the static CUDA runtime and, for
  # its nvcc-compiled (C++) objects, the C++ runtime (guarded static initialisation)
  string(APPEND FREEDNN_PC_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt -lstdc++")
endif()
foreach(pc cudnn freednn)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkg/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkg/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# ---------------------------------------------------------------- manifest (last)
# share/freednn/SHA256SUMS: "<sha256>  <path relative to the prefix>" for every file installed
# above, in sha256sum format (so `sha256sum -c` works too). Checked by `freednn verify`.
install(CODE [[
  set(_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  set(_sums "${_root}/share/freednn/SHA256SUMS")
  set(_files ${CMAKE_INSTALL_MANIFEST_FILES})
  list(REMOVE_DUPLICATES _files)
  list(SORT _files)
  set(_out "")
  foreach(_f IN LISTS _files)
    if(_f STREQUAL _sums OR NOT EXISTS "${_f}")
      continue()
    endif()
    file(RELATIVE_PATH _rel "${_root}" "${_f}")
    file(SHA256 "${_f}" _h)
    string(APPEND _out "${_h}  ${_rel}\n")
  endforeach()
  file(MAKE_DIRECTORY "${_root}/share/freednn")
  file(WRITE "${_sums}" "${_out}")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${_sums}")
  message(STATUS "Checksums: ${_sums}")
]])
