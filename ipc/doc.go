// Package ipc will hold simvis's shared-array interface (paper III-G): element
// descriptors, parameter values, the change-request log and the change log.
// It is empty until that work lands; the folder keeps the design's layout.
package ipc
