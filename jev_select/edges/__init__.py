"""The edges: every module here touches the environment, files, git or the network."""
