"""Shared test helpers: local fake servers, git fixtures and CLI runners."""
