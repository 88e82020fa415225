"""ragrade: grade the retrieval step of RAG pipelines and search systems."""

__version__ = "0.1.0"
