"""Placeholder until this command group lands."""

import typer

app = typer.Typer()
