"""Environment images: built on the local base image from SWE-bench specs, offline, cached by their inputs."""
