"""What every tool and check shares: contracts, finding codes, arguments, paging, deadlines, the
catalog and its call path."""
