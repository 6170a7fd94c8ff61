"""Code that runs inside the test process, not in harness: pytest plugins the boot script
(``verify.python.boot``) reads as text and hands to the pytest it starts. Each imports
only the standard library and pytest (any Python 3.8+); none is imported by harness."""
