"""The one thing pyproject.toml cannot say: its package finder only finds packages under their
own folders, and the board files of the top-level ``platforms/`` install as the package
``topsort_hdl.platform_data`` (pyproject.toml maps the folder and names the files)."""

from setuptools import find_namespace_packages, setup

setup(packages=find_namespace_packages(include=["topsort_hdl*"]) + ["topsort_hdl.platform_data"])
