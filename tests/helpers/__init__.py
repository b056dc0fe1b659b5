"""Builders, fake servers and fake-LLM responders shared by the tests (and the benchmarks). No tests here."""
