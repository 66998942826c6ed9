"""The compiled part of tacgrid: engine/_kernel.c, the movement search's inner loop.

Everything else is in pyproject.toml. The extension is optional: where no C compiler is
found the install still succeeds and engine.search runs its numpy loop instead (the same
totals, slower on big maps). The build then says so in one warning line (pip shows it with
``pip install -v``; ``python -m build`` always), and at run time ``tacgrid --version`` does
(``engine.kernel.state()``).

Two commands are adjusted here, as pyproject.toml cannot say either:

* ``build_ext`` prints that warning where the kernel cannot be built;
* ``build_py`` copies only data from the shipped data folders (pyproject.toml maps
  ``engine.data.maps``, ``.scenarios`` and ``.assets`` onto the top-level maps/, scenarios/
  and assets/), not the Python scripts kept beside them (``assets/build_content.py``, which
  makes the tilesets and maps and is no part of the engine).
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

#: The packages that are the shipped data folders: their files, never their scripts.
DATA_PACKAGES = ("engine.data.maps", "engine.data.scenarios", "engine.data.assets")

KERNEL_MISSING = (
    "WARNING: tacgrid: engine/_kernel.c was not compiled ({why}); tacgrid installs without "
    "its C kernel and runs the same searches in numpy, slower on big maps and batches. "
    "Install a C compiler (e.g. gcc, or the Xcode command line tools, or MSVC) and reinstall "
    "to build it; `tacgrid --version` says whether the kernel is active."
)


class DataFoldersBuildPy(build_py):
    """build_py that takes no modules from the shipped data folders."""

    def find_package_modules(self, package, package_dir):
        if package in DATA_PACKAGES:
            return []
        return super().find_package_modules(package, package_dir)


class KernelBuildExt(build_ext):
    """build_ext that says, in one warning line, when the optional kernel is not built."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            # setuptools then skips the optional extension with its own note, easy to miss
            # among the compiler's lines; this line names what it means for tacgrid.
            why = " ".join(str(exc).split()) or type(exc).__name__
            sys.stderr.write("\n" + KERNEL_MISSING.format(why=why[:200]) + "\n\n")
            sys.stderr.flush()
            raise


setup(
    cmdclass={"build_py": DataFoldersBuildPy, "build_ext": KernelBuildExt},
    ext_modules=[
        Extension(
            "engine._kernel",
            ["engine/_kernel.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ],
)
