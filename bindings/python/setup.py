"""Builds hark._hark (pybind11) against hark's CMake build; see pyproject.toml.

Why not CMake from here: the engine is one CMake build (kernels, flags per file, tests); this
only compiles the binding's one file against the public headers and links the finished libhark.so,
which is copied into the package (the module finds it beside itself: rpath $ORIGIN).
"""

import glob
import os
import shutil

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("HARK_BUILD_DIR", os.path.join(ROOT, "build")))

libraries = sorted(glob.glob(os.path.join(BUILD, "libhark.so.*")), key=len)
if not libraries:
    raise SystemExit(
        f"hark-whisper: no libhark.so in {BUILD}: build hark first (scripts/setup, or cmake --build build), "
        "or set HARK_BUILD_DIR to the build folder"
    )
# The library under its soname (libhark.so.0), beside the module.
soname = os.path.basename(libraries[0])
shutil.copy2(os.path.realpath(libraries[0]), os.path.join(HERE, "hark", soname))

setup(
    ext_modules=[
        Pybind11Extension(
            "hark._hark",
            [os.path.join("src", "hark_python.cpp")],
            include_dirs=[os.path.join(ROOT, "include"), os.path.join(BUILD, "include")],
            extra_objects=[os.path.join(HERE, "hark", soname)],
            # Rebuilt when a public header or the library changes, not only the binding's source:
            # a module left in build/ from older headers reads TranscribeParams with the old layout.
            depends=sorted(glob.glob(os.path.join(ROOT, "include", "hark", "*.h*")))
            + sorted(glob.glob(os.path.join(BUILD, "include", "hark", "*.h*")))
            + [os.path.realpath(libraries[0])],
            runtime_library_dirs=["$ORIGIN"],
            cxx_std=20,
        )
    ],
    cmdclass={"build_ext": build_ext},
)
