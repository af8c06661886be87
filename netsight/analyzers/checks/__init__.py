"""The checks analyze_config runs, each reporting findings with stable codes."""
