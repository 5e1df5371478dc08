"""The evaluation harness: datasets, tasks, instance environments and images, grading."""
