package offset

// Pack slides every live allocation down to the start of the range, in
// address order, so that all free space ends as one region at the tail:
// what SlideDown on each allocation in address order does, in one walk that
// never files an intermediate free region. For each allocation that moves,
// in address order, it calls moved with the allocation's new value and its
// old offset; the caller moves the data (old offset to new, in that order,
// each as a memmove) before reusing the space. Copies of an allocation
// keep identifying it. O(live allocations + free regions); it does not
// allocate, and moved may not call a's methods.
func (a *Allocator) Pack(moved func(h Allocation, from uint32)) {
	ns := a.array()
	prev := end // the last allocation kept, end before the first
	off := uint32(0)
	for i := a.first(); i != end; {
		n := ns.at(i)
		next := n.next
		if !n.used() {
			a.unlinkFast(n)
			a.push(i)
			i = next
			continue
		}
		n.prev = prev
		ns.at(prev).next = i
		if n.off != off {
			from := n.off
			n.off = off
			moved(a.handle(i), from)
		}
		off += n.size
		prev = i
		i = next
	}
	if off < a.capacity {
		// There was free space, so its nodes are back on the stack.
		a.replace(prev, end, off, a.capacity-off)
		return
	}
	ns.at(prev).next = end
	ns.at(end).prev = prev
}
