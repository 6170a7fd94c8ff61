"""Harness images: content-addressed builds of ``images/<name>/`` and helpers around them."""

from harness.images.build import ImageBuilder, ensure_image, host_ca_bundle
from harness.images.graph import ImageRef, images_dir, list_names
from harness.sandbox.engine import docker_client
from harness.sandbox.inject import HARNESS_PYTHONPATH, inject_harness_source

__all__ = [
    "HARNESS_PYTHONPATH",
    "ImageBuilder",
    "ImageRef",
    "docker_client",
    "ensure_image",
    "host_ca_bundle",
    "images_dir",
    "inject_harness_source",
    "list_names",
]
