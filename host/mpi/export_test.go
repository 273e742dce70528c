package mpi

// Matches says whether a point-to-point receive of (src, tag) accepts a
// message from esrc with etag, and whether a collective receive would.
func Matches(src, tag, esrc, etag int) (pt2pt, coll bool) {
	r := &request{ctx: ctxPt2Pt, src: src, tag: tag}
	e := &envelope{ctx: ctxPt2Pt, src: esrc, tag: etag}
	c := &envelope{ctx: ctxColl, src: esrc, tag: etag}
	return r.matches(e), r.matches(c)
}

// Envelope encodes an envelope.
func Envelope(src, tag, n int) []byte { return encode(ctxPt2Pt, src, tag, n) }
