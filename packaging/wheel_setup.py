"""setup.py for `make wheel`, copied beside a copy of the package that holds
libtureen.so: the wheel is a platform wheel (it carries a Linux x86-64
shared library) but pure Python otherwise, so its tag is
py3-none-<platform>: any Python 3 of that platform loads it through ctypes.
"""

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):  # type: ignore[no-untyped-def]
        return ("py3", "none", super().get_tag()[2])


setup(cmdclass={"bdist_wheel": PlatformWheel})
