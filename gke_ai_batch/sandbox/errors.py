"""The sandbox's one kind of failure: a sentence for the user, printed without a traceback."""


class SandboxError(Exception):
    """What went wrong and what to do, in one line."""
