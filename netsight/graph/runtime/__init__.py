"""Keeping a large live graph cheap: heap and garbage collector tuning."""
