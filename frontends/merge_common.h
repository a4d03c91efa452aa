/*
 * merge_common.h — common subexpressions merged: a node that computes what
 * an earlier node of the graph computes (the same op, attributes and
 * inputs; small constants compared by value) is removed and its readers
 * read the earlier node's outputs.  Nodes writing graph outputs and
 * Dropout (a training one draws a mask) are kept.
 */
#ifndef IPUSIM_MERGE_COMMON_H
#define IPUSIM_MERGE_COMMON_H

#include "graph.h"

/* On a topologically sorted graph; returns the number of nodes removed
 * (the graph compacted when any). */
int merge_common_nodes(graph *g);

#endif
