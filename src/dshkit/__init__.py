"""dshkit: the DeepSeek Harness session log and ctx.memory protocol as a testable contract."""

__version__ = "0.1.0"
