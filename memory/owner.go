package memory

// Owner says who holds an allocation: Kind is what its bytes are
// ("vertex", "meshlet-data", ...), Name who holds them ("mesh 12.1").
type Owner struct {
	Kind, Name string
}
