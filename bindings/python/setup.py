"""Build hook: a wheel that ships libtureen.so is platform-specific.

All metadata lives in pyproject.toml. This file only makes sure that when
``tureen/libtureen.so`` has been copied into the package before building, the
wheel is tagged for this platform (``py3-none-linux_x86_64`` and the like)
instead of ``py3-none-any``, so pip never installs a native library on a
machine it cannot run on. Without the .so the wheel stays pure Python.
"""
import os

from setuptools import Distribution, setup

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPS_LIBRARY = os.path.isfile(os.path.join(HERE, "tureen", "libtureen.so"))


class BinaryDistribution(Distribution):
    """Has native code (the .so), so the files go to the wheel's platlib root."""

    def has_ext_modules(self) -> bool:
        return True


cmdclass = {}
options = {}
if SHIPS_LIBRARY:
    options["distclass"] = BinaryDistribution
    try:  # setuptools >= 70.1 carries bdist_wheel itself
        from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
    except ImportError:  # older setuptools: the "wheel" package's
        try:
            from wheel.bdist_wheel import bdist_wheel as _bdist_wheel  # type: ignore
        except ImportError:
            _bdist_wheel = None

    if _bdist_wheel is not None:

        class bdist_wheel(_bdist_wheel):  # type: ignore[misc,valid-type]
            """Tags the wheel for this platform; loaded via ctypes, so any Python 3."""

            def get_tag(self):  # type: ignore[no-untyped-def]
                _python, _abi, plat = super().get_tag()
                return "py3", "none", plat

        cmdclass["bdist_wheel"] = bdist_wheel

setup(cmdclass=cmdclass, **options)
