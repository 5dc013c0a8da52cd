# SPDX-License-Identifier: GPL-2.0-or-later
# topology/: forwarders, OSTs, compute nodes, the default mapping, node
# sets, and the topology YAML loader.
noinst_LTLIBRARIES += libfwdtopology.la
libfwdtopology_la_SOURCES = \
	topology/topology.c topology/topology.h topology/names.c \
	topology/names.h \
	topology/nodeset.c topology/topology_load.c \
	topology/topo_cache.c topology/topo_cache.h
