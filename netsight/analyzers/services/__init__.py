"""The Service engine: selectors, ports, protocols and the endpoints behind each Service.

:func:`inspection.inspect` builds one :class:`service_reports.ServiceReport` per Service from
the parts, one job each: ``external_names``, ``pod_selection``, ``target_ports``,
``endpoint_health`` and ``slice_consistency``.
"""
