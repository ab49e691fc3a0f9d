"""Integrations with other frameworks (each behind its extra): :mod:`compliance.integrations.langchain`."""
