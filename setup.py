"""The compiled part of tacgrid: engine/_kernel.c, the movement search's inner loop.

Everything else is in pyproject.toml. The extension is optional: where no C compiler is
found the install still succeeds and engine.search runs its numpy loop instead (the same
totals, slower on big maps).

``build_py`` is adjusted here, as pyproject.toml cannot say it: it copies only data from the
shipped data folders (pyproject.toml maps ``engine.data.maps``, ``.scenarios`` and
``.assets`` onto the top-level maps/, scenarios/ and assets/), not the Python scripts kept
beside them (``assets/build_content.py``, which makes the tilesets and maps and is no part of
the engine).
"""

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

#: The packages that are the shipped data folders: their files, never their scripts.
DATA_PACKAGES = ("engine.data.maps", "engine.data.scenarios", "engine.data.assets")


class DataFoldersBuildPy(build_py):
    """build_py that takes no modules from the shipped data folders."""

    def find_package_modules(self, package, package_dir):
        if package in DATA_PACKAGES:
            return []
        return super().find_package_modules(package, package_dir)


setup(
    cmdclass={"build_py": DataFoldersBuildPy},
    ext_modules=[
        Extension(
            "engine._kernel",
            ["engine/_kernel.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ],
)
