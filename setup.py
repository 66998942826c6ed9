"""The compiled part of tacgrid: engine/_kernel.c, the movement search's inner loop.

Everything else is in pyproject.toml. The extension is optional: where no C compiler is
found the install still succeeds and engine.search runs its numpy loop instead (the same
totals, slower on big maps).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "engine._kernel",
            ["engine/_kernel.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
