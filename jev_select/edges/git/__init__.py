"""Git: the isolated session, local repositories, the bounded command runner, remotes and the table
read at the base.
"""
