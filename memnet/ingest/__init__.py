"""Ingest: artefacts (source trees, markdown, SysML) into sessions with locator ids."""
