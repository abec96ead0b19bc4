"""What the Python test scripts share: a list of named checks that prints each and keeps the failures."""


class Checks:
    def __init__(self):
        self.failures = []

    def __call__(self, condition, text):
        print(("  ok    " if condition else "  FAIL  ") + text, flush=True)
        if not condition:
            self.failures.append(text)
