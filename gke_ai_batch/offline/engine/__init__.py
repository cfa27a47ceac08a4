"""The offline runtime: the Pulumi program run under mocks, and the stack files it reads."""
