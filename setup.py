"""Build script for the optional C extensions (everything else is in pyproject.toml): ``linear_layouts.core._ccore._ext``
(the F2 core's hot paths) and ``linear_layouts.ops._claunch`` (the layout ops' kernel launch, built against
Python's limited API: one binary for every CPython from 3.10 on).

``pip install .`` (and ``pip install -e .``) compile them with the system C compiler. Where there is no
compiler, or the build fails, the package is installed without it — pure Python, same behaviour, slower —
and one line says so. An install never fails because of the extension.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NOTE = ("linear_layouts: the C extension was not built ({}); installing the pure-Python core "
        "(same results, slower)")


class OptionalBuildExt(build_ext):
    """``build_ext`` that never fails the install: on any error it prints one line and carries on."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler, no Python headers, a compile error: all the same here
            self._note(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            self._note(error)

    @staticmethod
    def _note(error: BaseException) -> None:
        reason = " ".join(str(error).split()) or type(error).__name__
        print(NOTE.format(reason[:200]), file=sys.stderr)


setup(
    ext_modules=[
        Extension(
            "linear_layouts.core._ccore._ext",
            sources=["src/linear_layouts/core/_ccore/_ext.c"],
        ),
        Extension(
            "linear_layouts.ops._claunch",
            sources=["src/linear_layouts/ops/_claunch.c"],
            define_macros=[("Py_LIMITED_API", "0x030A0000")],
            py_limited_api=True,
        ),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
