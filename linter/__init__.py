"""hwlint: reviews GPU-cluster purchase manifests against a declarative rule pack."""

__version__ = "0.1.0"
