from .module import LocalOrchestrator

__all__ = ['LocalOrchestrator']
