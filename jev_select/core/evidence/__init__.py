"""Task evidence: what each task's workflows, jobs, actions and package scripts run, and the gaps
where that cannot be read.
"""
