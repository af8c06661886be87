"""What every tool and check shares: contracts, finding codes, arguments, paging, deadlines,
the Tool and Check declarations and the one call path. It imports no tool, check or engine."""
