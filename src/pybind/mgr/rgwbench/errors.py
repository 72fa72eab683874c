"""The module's own exception, carrying the errno a command returns."""
import errno


class RGWBenchError(Exception):
    """A failure to report to the operator as one line, with a negative errno."""

    def __init__(self, message: str, err: int = errno.EINVAL) -> None:
        super().__init__(message)
        self.errno = -abs(err)


class InvalidInput(RGWBenchError):
    def __init__(self, message: str) -> None:
        super().__init__(message, errno.EINVAL)


class NotFound(RGWBenchError):
    def __init__(self, message: str) -> None:
        super().__init__(message, errno.ENOENT)


class Busy(RGWBenchError):
    def __init__(self, message: str) -> None:
        super().__init__(message, errno.EBUSY)


class NotSupported(RGWBenchError):
    """What the running release cannot do."""

    def __init__(self, message: str) -> None:
        super().__init__(message, errno.EOPNOTSUPP)
