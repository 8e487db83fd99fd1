// The shared libraries are the project's static libraries linked whole
// (lib/CMakeLists.txt); CMake needs one source of their own.
