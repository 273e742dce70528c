package cashscen

// paper is where the figures come from.
const paper = "cashmere-2l-memory-channel.txt"

// Table 1 and section 3.1's costs (µs).
const (
	// Table 1 «Page Transfer (Remote)», 2L/2LS.
	paperPageTransfer = 824.0
	// section 3.1 «The cost of a twinning operation on an 8K page is 199 μs».
	paperTwin = 199.0
	// section 3.1 «If the home node is remote, ... the cost ranges from
	// only 290 to 363 μs per page» (a full page: the top of the range).
	paperDiffLow, paperDiff = 290.0, 363.0
	// Table 1 «Lock Acquire», 2L/2LS.
	paperLock = 19.0
	// Table 1 «Barrier 58 (321)»: two processors, and 32 in parentheses.
	paperBarrier2, paperBarrier32 = 58.0, 321.0
	// Table 1's 1LD/1L column: «Lock Acquire 11», «Barrier 41 (364)»,
	// «Page Transfer (Local) 467», «Page Transfer (Remote) 777».
	paper1LDLock, paper1LDBarrier2 = 11.0, 41.0
	paper1LDLocal, paper1LDRemote  = 467.0, 777.0
	paper1LDBarrier32              = 364.0
	// section 3.1 «Memory protection operations on the AlphaServers cost
	// about 55 μs. Page faults on already-resident pages cost 72 μs.»
	paperMprotect, paperResidentFault = 55.0, 72.0
	// section 3.1 «Directory entry modification takes 16 μs for Cashmere
	// if locking is required, and 5 μs otherwise.»
	paperDirLocked, paperDirUnlocked = 16.0, 5.0
	// section 3.1 «If the home node is local (only applicable to the
	// one-level protocols), the cost ranges from 340 to 561 μs.»
	paperLocalDiffLow, paperLocalDiff = 340.0, 561.0
	// section 3.1 «Incoming diff operations range from 533 to 541 μs,
	// again depending on the size of the diff» (a full page: the top).
	paperInDiffLow, paperInDiff = 533.0, 541.0
)

// table3 is one program's column of Table 3's 2L rows (32 processors,
// 32:4, the paper's size of Table 2). Counts are as printed times the
// row's unit: «(K)» rows times 1000; Incoming Diffs and Flush-Updates
// carry no unit in the table and are read as K like the rows above them
// (Volrend's 0.11 and 0.67 would otherwise be fractions of an operation).
type table3 struct {
	ExecSec                            float64
	LockFlag                           float64
	Barriers                           float64
	ReadFaults, WriteFaults, Transfers float64
	DirUpdates, Notices, DataMB, Twins float64
	IncomingDiffs, FlushUpdates        float64
	// Shootdowns is 2LS's row (no unit printed: Water's 183 is read as a
	// count); -1 where the protocol's block has no such row, as for any
	// figure the table leaves out.
	Shootdowns float64
}

// table2 is one program's row of Table 2: the paper's size and the
// sequential time of the uninstrumented program.
type table2 struct {
	Short  string
	Size   string
	SeqSec float64
}

// paperApp is what the paper states about one program.
type paperApp struct {
	T2 table2
	T3 table3
}

// papers are Table 2's and Table 3's 2L figures of the six programs
// host/cashapps writes (the other three, Ilink, Volrend and Barnes, are
// not written).
var papers = map[string]paperApp{
	"sor": {table2{"3072x4096", "3072x4096 (50 MB), 24 iterations (Table 3's 48 barriers)", 162.2},
		table3{6.2, 0, 48, 340, 670, 340, 2020, 340, 4.25, 340, 0, 0, -1}},
	"clu": {table2{"2048x2048", "2048x2048 (33 MB), 32x32 blocks", 265.5},
		table3{13.3, 0, 130, 20710, 4100, 8300, 16500, 0, 68.44, 0, 0, 0, -1}},
	"lu": {table2{"2048x2048", "2048x2048 (33 MB), 32x32 blocks", 763.0},
		table3{140.2, 0, 130, 519520, 952420, 134600, 779970, 185880, 1293.09, 144740, 0, 0, -1}},
	"water": {table2{"4096 mols.", "4096 molecules (4 MB), 7 steps (inferred)", 1566.4},
		table3{65.3, 3680, 36, 72990, 35520, 31900, 111590, 77470, 263.94, 25640, 0, 170, -1}},
	"gauss": {table2{"2048x2048", "2048x2048 (33 MB)", 970.8},
		table3{42.7, 129820, 7, 173380, 8190, 42140, 67760, 23270, 345.48, 3580, 0, 0, -1}},
	"em3d": {table2{"64000 nodes", "64000 nodes (53 MB), 100 iterations", 145.0},
		table3{11.9, 0, 200, 39060, 42880, 32910, 154310, 32600, 275.91, 7080, 0, 0, -1}},
}

// paperSpeedup is the paper's 32:4 speedup of a program: derived: Table
// 2's sequential time / Table 3's 2L execution time (both stated in the
// text; Figure 5's bars are not read).
func paperSpeedup(name string) float64 {
	p := papers[name]
	return p.T2.SeqSec / p.T3.ExecSec
}

// paperVariants are Table 3's other protocols' columns of the six
// programs (32:4, the paper's size), by variant then program; -1 is a
// figure the table does not give (1LD's CLU twins are blank; 2LS has no
// incoming-diff row, 1LD neither that nor a shootdown row). Order of
// fields as table3: time (s), lock/flag acquires, barriers, read and write
// faults, transfers, directory updates, notices, data (MB), twins,
// incoming diffs, flush-updates (both read as K like 2L's), shootdowns.
var paperVariants = map[string]map[string]table3{
	"2LS": {
		"sor":   {6.2, 0, 48, 340, 670, 340, 2020, 340, 4.25, 340, -1, -1, 0},
		"clu":   {13.4, 0, 130, 20710, 4100, 8310, 16500, 0, 68.44, 0, -1, -1, 0},
		"lu":    {140.1, 0, 130, 517950, 952390, 134250, 777650, 186210, 1293.31, 144930, -1, -1, 0},
		"water": {67.4, 3680, 36, 71850, 35510, 30610, 109400, 80000, 267.64, 25630, -1, -1, 183},
		"gauss": {43.7, 129820, 7, 173700, 8190, 41870, 70880, 23130, 345.58, 3580, -1, -1, 0},
		"em3d":  {11.6, 0, 200, 39430, 42870, 33270, 154950, 32950, 276.03, 6790, -1, -1, 0},
	},
	"2LMigr": {
		"sor":   {7.2, 0, 48, 670, 670, 670, 2690, 670, 5.64, 0, 0, 0, -1},
		"clu":   {14.2, 0, 130, 20700, 4160, 8300, 20010, 0, 68.37, 0, 0, 0, -1},
		"lu":    {126.8, 0, 130, 584570, 938880, 156620, 816570, 220470, 1333.47, 105790, 10, 0, -1},
		"water": {63.5, 3680, 36, 80680, 35500, 36220, 142310, 93070, 299.02, 860, 0, 90, -1},
		"gauss": {48.9, 129820, 7, 169820, 13280, 45150, 89660, 32220, 371.82, 0, 0, 0, -1},
		"em3d":  {13.3, 0, 200, 47410, 44400, 44470, 179410, 41040, 366.13, 0, 0, 0, -1},
	},
	"1LD": {
		"sor":   {6.6, 0, 48, 2980, 2980, 2980, 5950, 2980, 24.83, 2980, -1, -1, -1},
		"clu":   {15.4, 0, 130, 22830, 7710, 22830, 25190, 2360, 254.24, -1, -1, -1, -1},
		"lu":    {167.3, 0, 130, 1001290, 948480, 1001300, 1937720, 936420, 8243.34, 948480, -1, -1, -1},
		"water": {69.7, 3680, 36, 84480, 35610, 84480, 163170, 78690, 696.42, 25640, -1, -1, -1},
		"gauss": {80.2, 129820, 7, 205690, 8180, 205950, 312440, 106740, 1685.10, 8180, -1, -1, -1},
		"em3d":  {15.4, 0, 200, 166920, 81200, 166920, 328630, 161710, 1374.53, 81200, -1, -1, -1},
	},
}
