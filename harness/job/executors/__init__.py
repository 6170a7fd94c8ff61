"""Where a job's trials run: the executor protocol (``base``), in-process threads, Ray."""
