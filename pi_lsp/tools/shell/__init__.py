"""The shell side the tools share: process supervision, bounded output buffers, throttled updates."""
