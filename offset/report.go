package offset

import "math/bits"

// Report is a snapshot of the allocator's storage.
type Report struct {
	// Free is the total of free units.
	Free uint32
	// FreeRegions is the number of free regions.
	FreeRegions uint32
	// Allocations is the number of live allocations.
	Allocations uint32
	// MaxAlloc is the largest request Allocate is sure to serve: the lower
	// bound of the top non-empty bin (what the reference algorithm reports
	// as its largest free region). 0 when nothing is free. The largest free
	// region may be up to 12.5% larger: see LargestFree.
	MaxAlloc uint32
}

// Report returns the storage report. O(1).
func (a *Allocator) Report() Report {
	r := Report{Free: a.freeUnits, FreeRegions: a.freeRegions, Allocations: a.live()}
	if b, ok := a.topBin(); ok {
		r.MaxAlloc = uint32(min(binSize(b), uint64(a.capacity)))
	}
	return r
}

// LargestFree returns the size of the largest free region, exactly. It
// scans the top non-empty bin, so it costs O(k) for the k regions filed
// there (regions within 12.5% of the largest); usually k is small.
func (a *Allocator) LargestFree() uint32 {
	b, ok := a.topBin()
	if !ok {
		return 0
	}
	var largest uint32
	for i := a.head(b); i != binList(b); i = a.at(i).binNext {
		largest = max(largest, a.at(i).size)
	}
	return largest
}

// Tail returns the size of the free region at the end of the range, 0 when
// the range ends with an allocation. Growing by k units makes a free region
// of Tail()+k units. O(1).
func (a *Allocator) Tail() uint32 {
	if n := a.at(a.last()); !n.used() {
		return n.size
	}
	return 0
}

func (a *Allocator) topBin() (uint32, bool) {
	if a.topMask == 0 {
		return 0, false
	}
	top := 31 - uint32(bits.LeadingZeros32(a.topMask))
	leaf := 7 - uint32(bits.LeadingZeros8(a.leafMask[top]))
	return top<<topBinShift | leaf, true
}
