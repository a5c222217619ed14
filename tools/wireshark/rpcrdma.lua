-- rpcrdma.lua - a Wireshark dissector for RPC-over-RDMA Version One
-- (RFC 8166) and Version Two (draft-cel-nfsv4-rpcrdma-version-two-05),
-- shipped by tirpc-rdma and described in rpcrdma-wireshark(7).
--
-- What it owns: decoding the transport header of every message of both
-- versions as this library sends and receives it (src/wire/rw_hdr.c; the
-- layouts of RFC 8166 §4.2-4.3 and v2-05 §7.2), the xcharext-02 optinfo
-- bodies of an RDMA2_OPTIONAL (xcharext-02 §5.2, chosen by the carrier
-- alone, AMB-V2-1), and handing the inline RPC message to
-- Wireshark's ONC RPC dissector ("rpc").  It does not reassemble a Send
-- split over several packets, nor follow RDMA Reads and Writes into
-- chunks: in the First packet of a Send split over several, the header is
-- decoded as far as that packet goes and the RPC message is left alone;
-- the Middle and Last packets are not claimed.
--
-- Wireshark 4.0 decodes only Version One, in its built-in "rpcordma"
-- dissector, which sits on the same heuristic list ("infiniband.payload").
-- To read a mixed capture with this one, disable that one:
--   tshark --disable-protocol rpcordma -r f.pcap
-- (Analyze > Enabled Protocols in the GUI.)  Either may otherwise claim a
-- Version One Send first.
--
-- A header that runs past the end of the Send, or whose words are not what
-- the XDR allows (an optional-data flag not 0 or 1, a direction not CALL
-- or REPLY, a procedure or error code the version does not define, a
-- property value invalid for its type, V2-PROP-1, V2-PROP-2), is shown
-- with the expert item rpcrdma.malformed (group Malformed, which is what
-- the display filter _ws.malformed matches).  No input makes this script
-- raise a Lua error: every decode runs under pcall, and an unexpected
-- failure is reported the same way.

local p = Proto("rpcrdma", "RPC-over-RDMA (versions 1 and 2)")

-- Numbers from RFC 8166 section 4.2.4 and v2-05 section 7.2.
local PROC_NAMES = {
	[0] = "MSG", [1] = "NOMSG", [2] = "MSGP", [3] = "DONE",
	[4] = "ERROR", [5] = "OPTIONAL", [6] = "CONNPROP", [7] = "REQPROP",
	[8] = "RESPROP", [9] = "UPDPROP",
}
-- Which procedures each version defines: v1 MSGP and DONE are deprecated
-- but defined (RFC 8166 section 4.6); v2 has no 2 or 3 (draft 7.2).
local PROC_OK = {
	[1] = { [0] = true, [1] = true, [2] = true, [3] = true, [4] = true },
	[2] = { [0] = true, [1] = true, [4] = true, [5] = true, [6] = true,
		[7] = true, [8] = true, [9] = true },
}
local ERR_NAMES = {
	[1] = "ERR_VERS", [2] = "ERR_CHUNK / BAD_XDR", [3] = "INVAL_PROC",
	[4] = "READ_CHUNKS", [5] = "WRITE_CHUNKS", [6] = "SEGMENTS",
	[7] = "WRITE_RESOURCE", [8] = "REPLY_RESOURCE", [9] = "INVAL_OPTION",
	[10] = "SYSTEM",
}
local DIR_NAMES = { [0] = "CALL", [1] = "REPLY" }
local PROPID_NAMES = { [1] = "RBSIZ", [2] = "BRS" }	-- draft 6.2
local XCHARID_NAMES = { [1] = "RBSIZ", [2] = "REQREMINV", [3] = "BRS" }
local BRS_NAMES = { [0] = "NONE", [1] = "INLINE", [2] = "GENL" }
local OPTTYPE_NAMES = {	-- xcharext-02 section 4
	[1] = "ROPT_INITXCH", [2] = "ROPT_REQXCH", [3] = "ROPT_RESPXCH",
	[4] = "ROPT_UPDXCH",
}

local f = {
	xid = ProtoField.uint32("rpcrdma.xid", "XID", base.HEX),
	vers = ProtoField.uint32("rpcrdma.vers", "Version", base.DEC),
	credits = ProtoField.uint32("rpcrdma.credits", "Credits", base.DEC),
	proc = ProtoField.uint32("rpcrdma.proc", "Procedure", base.DEC,
		PROC_NAMES),
	direction = ProtoField.uint32("rpcrdma.direction", "Direction",
		base.DEC, DIR_NAMES),
	inv_handle = ProtoField.uint32("rpcrdma.inv_handle",
		"Remote Invalidation handle", base.HEX),
	reads = ProtoField.none("rpcrdma.reads", "Read list"),
	writes = ProtoField.none("rpcrdma.writes", "Write list"),
	reply = ProtoField.none("rpcrdma.reply", "Reply chunk"),
	reads_count = ProtoField.uint32("rpcrdma.reads.count",
		"Read segments", base.DEC),
	writes_count = ProtoField.uint32("rpcrdma.writes.count",
		"Write chunks", base.DEC),
	-- rpcrdma.reply itself is in every MSG/NOMSG header, present or
	-- not: this is what a filter for a Reply chunk tests (0 or 1).
	reply_count = ProtoField.uint32("rpcrdma.reply.count",
		"Reply chunks", base.DEC),
	present = ProtoField.uint32("rpcrdma.present", "Present", base.DEC),
	chunk = ProtoField.none("rpcrdma.chunk", "Chunk"),
	nseg = ProtoField.uint32("rpcrdma.nseg", "Segments", base.DEC),
	segment = ProtoField.none("rpcrdma.segment", "Segment"),
	position = ProtoField.uint32("rpcrdma.position", "Position",
		base.DEC),
	handle = ProtoField.uint32("rpcrdma.handle", "Handle", base.HEX),
	length = ProtoField.uint32("rpcrdma.length", "Length", base.DEC),
	offset = ProtoField.uint64("rpcrdma.offset", "Offset", base.HEX),
	align = ProtoField.uint32("rpcrdma.align", "Alignment", base.DEC),
	thresh = ProtoField.uint32("rpcrdma.thresh", "Threshold", base.DEC),
	err = ProtoField.uint32("rpcrdma.err", "Error", base.DEC, ERR_NAMES),
	vers_low = ProtoField.uint32("rpcrdma.vers_low", "Lowest version",
		base.DEC),
	vers_high = ProtoField.uint32("rpcrdma.vers_high",
		"Highest version", base.DEC),
	max_chunks = ProtoField.uint32("rpcrdma.max_chunks", "Max chunks",
		base.DEC),
	max_segments = ProtoField.uint32("rpcrdma.max_segments",
		"Max segments", base.DEC),
	chunk_index = ProtoField.uint32("rpcrdma.chunk_index",
		"Chunk index", base.DEC),
	length_needed = ProtoField.uint32("rpcrdma.length_needed",
		"Length needed", base.DEC),
	optdir = ProtoField.uint32("rpcrdma.optdir", "Optional direction",
		base.DEC, DIR_NAMES),
	opttype = ProtoField.uint32("rpcrdma.opttype", "Optional type",
		base.DEC, OPTTYPE_NAMES),
	optinfo_len = ProtoField.uint32("rpcrdma.optinfo.length",
		"Optinfo length", base.DEC),
	optinfo = ProtoField.bytes("rpcrdma.optinfo", "Optinfo"),
	propset = ProtoField.none("rpcrdma.propset", "Property set"),
	propset_count = ProtoField.uint32("rpcrdma.propset.count",
		"Properties", base.DEC),
	prop = ProtoField.none("rpcrdma.prop", "Property"),
	propid = ProtoField.uint32("rpcrdma.propid", "Property", base.DEC,
		PROPID_NAMES),
	xcharid = ProtoField.uint32("rpcrdma.xcharid", "Characteristic",
		base.DEC, XCHARID_NAMES),
	prop_len = ProtoField.uint32("rpcrdma.prop.length", "Value length",
		base.DEC),
	prop_data = ProtoField.bytes("rpcrdma.prop.data", "Value"),
	rbsiz = ProtoField.uint32("rpcrdma.rbsiz", "Receive Buffer Size",
		base.DEC),
	brs = ProtoField.uint32("rpcrdma.brs", "Backward Request Support",
		base.DEC, BRS_NAMES),
	reqreminv = ProtoField.uint32("rpcrdma.reqreminv",
		"Requester Remote Invalidation", base.DEC),
	subset = ProtoField.none("rpcrdma.subset", "Property subset"),
	subset_count = ProtoField.uint32("rpcrdma.subset.count", "Words",
		base.DEC),
	subset_word = ProtoField.uint32("rpcrdma.subset.word", "Word",
		base.HEX),
	subset_bit = ProtoField.uint32("rpcrdma.subset.bit", "Member",
		base.DEC),
	pendclr = ProtoField.uint32("rpcrdma.pendclr", "Pending cleared",
		base.DEC),
	payload_len = ProtoField.uint32("rpcrdma.payload.length",
		"Inline payload", base.DEC),
	placed_len = ProtoField.uint32("rpcrdma.placed.length",
		"Moved by RDMA, given as zeros", base.DEC),
}
local pf = {}
for _, v in pairs(f) do
	pf[#pf + 1] = v
end
p.fields = pf

local ex_malformed = ProtoExpert.new("rpcrdma.malformed",
	"Malformed RPC-over-RDMA header", expert.group.MALFORMED,
	expert.severity.ERROR)
local ex_protocol = ProtoExpert.new("rpcrdma.protocol",
	"RPC-over-RDMA protocol violation", expert.group.PROTOCOL,
	expert.severity.WARN)
local ex_note = ProtoExpert.new("rpcrdma.note", "RPC-over-RDMA note",
	expert.group.SEQUENCE, expert.severity.NOTE)
p.experts = { ex_malformed, ex_protocol, ex_note }

local rpc_handle = Dissector.get("rpc")

-- The InfiniBand opcode of the packet: its low five bits are the operation
-- whatever the transport (RC, UC, UD) in the high three.  A Send larger
-- than the path MTU goes as First, Middle(s) and Last; only the First
-- starts with our header, and RDMA Write and Read Response packets carry
-- chunk data, never a header.
local f_bth_opcode = Field.new("infiniband.bth.opcode")
local SEND_FIRST = 0
local SEND_WHOLE = { [4] = true, [5] = true, [23] = true }	-- Only, w/ Imm, w/ Inv

-- A decoding error travels as a table so that pcall can tell it from a
-- bug in this script; both end as rpcrdma.malformed, never a Lua error.
local function bad(why)
	error({ malformed = why }, 0)
end

-- The cursor over one XDR stream: the Send's octets [off, stop).
local function cursor(tvb, off, stop)
	return { tvb = tvb, off = off, stop = stop, reads = {}, writes = {} }
end

local function need(c, n, what)
	if n < 0 or c.off + n > c.stop then
		if c.first then
			error({ split = what }, 0)
		end
		bad(what .. " runs past the end of the message")
	end
end

-- One 32-bit word into tree as field; returns its value.
local function word(c, tree, field, what)
	need(c, 4, what)
	local r = c.tvb(c.off, 4)
	local v = r:uint()
	local item = tree:add(field, r)
	c.off = c.off + 4
	return v, item
end

-- An optional-data flag (RFC 4506 §4.19): 0 or 1, anything else is
-- malformed.
local function flag(c, tree, what)
	local v = word(c, tree, f.present, what)
	if v > 1 then
		bad(what .. ": optional-data flag " .. v .. " is not 0 or 1")
	end
	return v == 1
end

-- A count of elements of at least unit octets each, checked against what
-- is left so that a huge count cannot make us loop (RW_R_TRUNCATED).
local function count(c, tree, field, unit, what)
	local n = word(c, tree, field, what)
	if n * unit > c.stop - c.off and not c.first then
		bad(what .. ": count " .. n .. " cannot fit in the message")
	end
	return n
end

-- Segment: handle, length, offset (RFC 8166 section 3.4.3).
local function segment(c, tree, handles)
	need(c, 16, "segment")
	local st = tree:add(f.segment, c.tvb(c.off, 16))
	local h = word(c, st, f.handle, "segment")
	local len = word(c, st, f.length, "segment")
	st:add(f.offset, c.tvb(c.off, 8))
	c.off = c.off + 8
	handles[h] = true
	st:append_text(string.format(": handle 0x%08x length %d", h, len))
	return len
end

-- Read list (RFC 8166 section 4.3.1): { 1, position, segment }* 0.
local function read_list(c, tree, handles)
	need(c, 4, "Read list")
	local start = c.off
	local lt = tree:add(f.reads, c.tvb(c.off, 0))
	local n = 0
	while flag(c, lt, "Read list") do
		need(c, 20, "Read segment")
		local st = lt:add(f.chunk, c.tvb(c.off, 20))
		local pos = word(c, st, f.position, "Read segment")
		local len = segment(c, st, handles)
		st:set_text("Read segment at position " .. pos)
		n = n + 1
		-- segments of one position make one chunk (RFC 8166 3.4.5)
		local last = c.reads[#c.reads]
		if last and last.pos == pos then
			last.len = last.len + len
		else
			c.reads[#c.reads + 1] = { pos = pos, len = len }
		end
	end
	lt:set_len(c.off - start)
	lt:add(f.reads_count, c.tvb(start, 4), n):set_generated()
	lt:append_text(": " .. n .. " segment(s)")
	return n
end

-- Write chunk (RFC 8166 section 3.4.6): nseg, then nseg segments.
local function write_chunk(c, tree, label, handles)
	need(c, 4, label)
	local start = c.off
	local ct = tree:add(f.chunk, c.tvb(c.off, 0))
	local n = count(c, ct, f.nseg, 16, label)
	local len = 0
	for _ = 1, n do
		len = len + segment(c, ct, handles)
	end
	ct:set_len(c.off - start)
	ct:set_text(label .. ": " .. n .. " segment(s)")
	return len
end

-- Write list (RFC 8166 section 4.3.2): { 1, chunk }* 0.
local function write_list(c, tree, handles)
	need(c, 4, "Write list")
	local start = c.off
	local lt = tree:add(f.writes, c.tvb(c.off, 0))
	local n = 0
	while flag(c, lt, "Write list") do
		n = n + 1
		c.writes[n] = write_chunk(c, lt, "Write chunk " .. n, handles)
	end
	lt:set_len(c.off - start)
	lt:add(f.writes_count, c.tvb(start, 4), n):set_generated()
	lt:append_text(": " .. n .. " chunk(s)")
	return n
end

-- Reply chunk (RFC 8166 section 4.3.3): 0, or 1 and a Write chunk.
local function reply_chunk(c, tree, handles)
	need(c, 4, "Reply chunk")
	local start = c.off
	local lt = tree:add(f.reply, c.tvb(c.off, 0))
	local present = flag(c, lt, "Reply chunk")
	if present then
		write_chunk(c, lt, "Reply chunk", handles)
	end
	lt:set_len(c.off - start)
	local n = present and 1 or 0
	lt:add(f.reply_count, c.tvb(start, 4), n):set_generated()
	lt:append_text(present and ": present" or ": absent")
	return present
end

-- The three chunk lists of MSG, NOMSG and MSGP.
local function chunk_lists(c, tree, handles)
	local nr = read_list(c, tree, handles)
	local nw = write_list(c, tree, handles)
	local rp = reply_chunk(c, tree, handles)
	return nr, nw, rp
end

-- An XDR opaque<> (RFC 4506 §4.10): length, octets, 0-3 octets of
-- padding.
local function opaque(c, tree, lenfield, datafield, what)
	local n = word(c, tree, lenfield, what)
	local padded = n + (4 - n % 4) % 4
	need(c, padded, what)
	if n > 0 then
		tree:add(datafield, c.tvb(c.off, n))
	end
	local at = c.off
	c.off = c.off + padded
	return n, at
end

-- One property value: ids and typing are the codec's (AMB-X-1): v2-05 ids {1 RBSIZ, 2 BRS}, xcharext ids {1 RBSIZ, 2 REQREMINV,
-- 3 BRS}.  Empty data is the default (V2-PROP-4); an unknown id is skipped
-- (V2-PROP-3); a known id whose data is not one word is an XDR error
-- (V2-PROP-2).
local function propval(c, tree, xchar)
	need(c, 8, "property")
	local start = c.off
	local pt = tree:add(f.prop, c.tvb(c.off, 0))
	local id = word(c, pt, xchar and f.xcharid or f.propid, "property")
	local n, at = opaque(c, pt, f.prop_len, f.prop_data, "property value")
	pt:set_len(c.off - start)
	local names = xchar and XCHARID_NAMES or PROPID_NAMES
	local name = names[id]
	if id >= 0xFFFFFF00 then
		name = string.format("experimental 0x%08x", id)
	end
	pt:set_text("Property " .. (name or ("unknown " .. id)))
	if not names[id] then
		return
	end
	if n == 0 then
		pt:append_text(": default")
		return
	end
	if n ~= 4 then
		bad("property " .. name .. ": " .. n ..
			" octets of data, its type is one word")
	end
	local v = c.tvb(at, 4):uint()
	local vf = f.rbsiz
	if name == "BRS" then
		vf = f.brs
		if v > 2 then
			bad("property BRS: " .. v .. " is not a bkreqsup")
		end
		pt:append_text(": " .. BRS_NAMES[v])
	elseif name == "REQREMINV" then
		vf = f.reqreminv
		if v > 1 then
			bad("property REQREMINV: " .. v .. " is not a bool")
		end
		pt:append_text(v == 1 and ": TRUE" or ": FALSE")
	else
		pt:append_text(": " .. v)
	end
	pt:add(vf, c.tvb(at, 4))
end

-- A propset / xcharspec: count, then { id, opaque data } each.
local function propset(c, tree, label, xchar)
	need(c, 4, label)
	local start = c.off
	local st = tree:add(f.propset, c.tvb(c.off, 0))
	local n = count(c, st, f.propset_count, 8, label)
	for _ = 1, n do
		propval(c, st, xchar)
	end
	st:set_len(c.off - start)
	st:set_text(label .. ": " .. n .. " propert" ..
		(n == 1 and "y" or "ies"))
end

-- A propsubset / xcharsubset: count, then bitmap words, bit N in word
-- N / 32 as 1 << N % 32 (V2-PROP-5, AMB-V2-7).
local function subset(c, tree, label)
	need(c, 4, label)
	local start = c.off
	local st = tree:add(f.subset, c.tvb(c.off, 0))
	local n = count(c, st, f.subset_count, 4, label)
	local members = {}
	for i = 0, n - 1 do
		local at = c.off
		local w = word(c, st, f.subset_word, label)
		for b = 0, 31 do
			if math.floor(w / 2 ^ b) % 2 == 1 then
				members[#members + 1] = i * 32 + b
				st:add(f.subset_bit, c.tvb(at, 4),
					i * 32 + b):set_generated()
			end
		end
	end
	st:set_len(c.off - start)
	st:set_text(label .. ": {" .. table.concat(members, ", ") .. "}")
end

-- Error bodies (RFC 8166 section 4.5; draft section 7.2.4).  ERR_VERS has
-- the same layout in every version (V1-EXT-2), so it is decoded whatever
-- rdma_vers says.
local function error_body(c, tree, vers, info)
	local code = word(c, tree, f.err, "rdma_err")
	if code == 2 then
		info[#info + 1] = vers == 1 and "ERR_CHUNK" or "BAD_XDR"
	else
		info[#info + 1] = ERR_NAMES[code] or ("error " .. code)
	end
	if code == 1 then
		local lo = word(c, tree, f.vers_low, "ERR_VERS")
		local hi = word(c, tree, f.vers_high, "ERR_VERS")
		info[#info + 1] = lo .. "-" .. hi
		return
	end
	if vers == 1 then
		if code ~= 2 then
			bad("error code " .. code .. " is not defined in v1")
		end
		return
	end
	if code == 4 or code == 5 then
		word(c, tree, f.max_chunks, "rdma_max_chunks")
	elseif code == 6 then
		word(c, tree, f.max_segments, "rdma_max_segments")
	elseif code == 7 then
		word(c, tree, f.chunk_index, "rdma_chunk_index")
		word(c, tree, f.length_needed, "rdma_length_needed")
	elseif code == 8 then
		word(c, tree, f.length_needed, "rdma_length_needed")
	elseif code < 2 or code > 10 then
		-- AMB-V2-10: an unknown code has no known body.
		bad("error code " .. code .. " is not defined in v2")
	end
end

-- xcharext-02 optinfo bodies (xcharext-02 §5.2), decoded only inside the
-- optinfo's own length.
local function xchar_body(c, tree, opttype)
	if opttype == 1 then
		propset(c, tree, "optixch_start", true)
		subset(c, tree, "optixch_nochg")
	elseif opttype == 2 then
		propset(c, tree, "optreqxch_want", true)
	elseif opttype == 3 then
		subset(c, tree, "optrespxch_done")
		subset(c, tree, "optrespxch_rej")
		subset(c, tree, "optrespxch_pend")
	elseif opttype == 4 then
		propval(c, tree, true)
		local v = word(c, tree, f.pendclr, "optupdxch_pendclr")
		if v > 1 then
			bad("optupdxch_pendclr " .. v .. " is not a bool")
		end
	end
	if c.off ~= c.stop then
		tree:add_proto_expert_info(ex_protocol, (c.stop - c.off) ..
			" octets left over in the optinfo")
	end
end

-- The most octets placed by RDMA that the RPC dissector is shown as
-- zeros (a length from the capture is not trusted beyond it).
local PLACED_MAX = 16 * 1024 * 1024

local function xdr_pad(n)
	return n + (4 - n % 4) % 4
end

-- The data items a peer moved by RDMA are not in the Send: the inline
-- message lacks them (RFC 8166 3.4.5-3.4.6: a Read chunk's item is cut
-- out of a Call at its position, a Write chunk's from a Reply, the
-- length words staying inline).  The ONC RPC dissector would take such a
-- message for a truncated one (a WRITE's data, a READ's result) and mark
-- it malformed; it is given the message with each item put back as
-- zeros (padded), in a data source of its own.  A Write chunk's item is
-- put back at the end of the results: where it was, only the Upper-Layer
-- Binding knows, and NFS's (READ, READLINK) puts it last.  nil when
-- nothing was moved, or when the lengths and positions do not fit.
local function placed(tvb, off, n, c)
	local reply = n >= 8 and tvb(off + 4, 4):uint() == 1
	local gaps, total = {}, 0
	if reply then
		local at = n
		for _, len in ipairs(c.writes) do
			gaps[#gaps + 1] = { pos = at, len = xdr_pad(len) }
			at = at + xdr_pad(len)
		end
	else
		for _, rc in ipairs(c.reads) do
			if rc.pos > 0 then
				gaps[#gaps + 1] = { pos = rc.pos,
					len = xdr_pad(rc.len) }
			end
		end
	end
	if #gaps == 0 then
		return nil
	end
	local msg = tvb(off, n):bytes()
	for _, g in ipairs(gaps) do
		total = total + g.len
		if total > PLACED_MAX or g.pos > msg:len() or g.pos % 4 ~= 0 then
			return nil
		end
		local tail = nil
		if g.pos < msg:len() then
			tail = msg:subset(g.pos, msg:len() - g.pos)
			msg:set_size(g.pos)
		end
		msg:set_size(g.pos + g.len)
		if tail then
			msg:append(tail)
		end
	end
	return msg:tvb("RPC message, moved items as zeros"), total
end

-- The inline RPC message, or the part of one that came inline, goes to
-- the ONC RPC dissector.  Its own exceptions (a part of a message) end in
-- its own malformed item; they are not ours to raise.
local function payload(tvb, off, pinfo, tree, root, info, c)
	local n = tvb:len() - off
	if n <= 0 then
		return 0
	end
	root:add(f.payload_len, tvb(off, n), n):set_generated()
	if info.first then
		root:add_proto_expert_info(ex_note, "the Send goes on in the" ..
			" next packets, which are not reassembled: the RPC" ..
			" message is not decoded")
		return n
	end
	if rpc_handle then
		local whole, moved = nil, 0
		if c and n > 0 then
			whole, moved = placed(tvb, off, n, c)
		end
		if whole then
			root:add(f.placed_len, tvb(off, n), moved):set_generated()
			root:add_proto_expert_info(ex_note, moved .. " octets" ..
				" moved by RDMA are given to the RPC dissector" ..
				" as zeros")
		end
		info.rpc = true
		pcall(function()
			rpc_handle:call(whole or tvb(off):tvb(), pinfo, tree)
		end)
	end
	return n
end

local function dissect_header(tvb, pinfo, tree, root, info)
	local len = tvb:len()
	local c = cursor(tvb, 0, len)
	c.first = info.first
	local xid = word(c, root, f.xid, "rdma_xid")
	local vers = word(c, root, f.vers, "rdma_vers")
	info[#info + 1] = "v" .. vers
	info[#info + 1] = string.format("xid 0x%08x", xid)
	word(c, root, f.credits, "rdma_credit")
	local proc, proc_item = word(c, root, f.proc, "rdma_proc")
	table.insert(info, 2, PROC_NAMES[proc] or ("proc " .. proc))

	if proc == 4 then
		error_body(c, root, vers, info)
	elseif not PROC_OK[vers] then
		root:add_proto_expert_info(ex_protocol, "version " .. vers ..
			" is unknown: only the fixed words are decoded")
		return
	elseif not PROC_OK[vers][proc] then
		proc_item:add_proto_expert_info(ex_malformed, "procedure " ..
			proc .. " is not defined in version " .. vers)
		return
	elseif proc == 2 or proc == 3 then
		proc_item:add_proto_expert_info(ex_note, PROC_NAMES[proc] ..
			" is deprecated: RFC 8166 section 4.6")
		if proc == 2 then
			word(c, root, f.align, "rdma_align")
			word(c, root, f.thresh, "rdma_thresh")
			chunk_lists(c, root, {})
			payload(tvb, c.off, pinfo, tree, root, info)
			return
		end
	elseif proc == 0 or proc == 1 then
		local handles = {}
		local inv = 0
		if vers == 2 then
			local d = word(c, root, f.direction, "rdma_direction")
			if d > 1 then
				bad("rdma_direction " .. d ..
					" is neither CALL nor REPLY")
			end
			info[#info + 1] = DIR_NAMES[d]
			local item
			inv, item = word(c, root, f.inv_handle,
				"rdma_inv_handle")
			c.inv_item = item
		end
		local nr, nw, rp = chunk_lists(c, root, handles)
		if nr + nw > 0 or rp then
			info[#info + 1] = string.format("reads %d writes %d%s",
				nr, nw, rp and " reply" or "")
		end
		if inv ~= 0 and not handles[inv] then
			c.inv_item:add_proto_expert_info(ex_protocol,
				"names no handle of this header (V2-RI-1)")
		end
		if proc == 0 then
			if payload(tvb, c.off, pinfo, tree, root, info, c) == 0 then
				root:add_proto_expert_info(ex_protocol,
					"MSG without an inline RPC message" ..
					" (V2-PAY-1)")
			end
			return
		end
	elseif proc == 5 then
		local d = word(c, root, f.optdir, "rdma_optdir")
		if d > 1 then
			bad("rdma_optdir " .. d .. " is neither CALL nor REPLY")
		end
		local t = word(c, root, f.opttype, "rdma_opttype")
		local n, at = opaque(c, root, f.optinfo_len, f.optinfo,
			"rdma_optinfo")
		info[#info + 1] = OPTTYPE_NAMES[t] or ("opttype " .. t)
		if OPTTYPE_NAMES[t] then
			local ot = root:add(f.optinfo, tvb(at, n))
			ot:set_text("xcharext-02 " .. OPTTYPE_NAMES[t])
			xchar_body(cursor(tvb, at, at + n), ot, t)
		end
		-- V2-PAY-3: all, part or none of an RPC message may follow.
		payload(tvb, c.off, pinfo, tree, root, info)
		return
	elseif proc == 6 then
		propset(c, root, "rdma_start", false)
		subset(c, root, "rdma_nochg")
	elseif proc == 7 then
		propset(c, root, "rdma_want", false)
	elseif proc == 8 then
		subset(c, root, "rdma_done")
		subset(c, root, "rdma_rejected")
		propset(c, root, "rdma_other", false)
	elseif proc == 9 then
		propset(c, root, "rdma_now", false)
	end
	-- NOMSG, DONE, ERROR and the property messages carry no payload
	-- (V2-PAY-2).
	if c.off < len then
		root:add_proto_expert_info(ex_protocol, (len - c.off) ..
			" octets after a header that carries no payload")
	end
end

-- first: the packet is the First of a Send split over several packets.
local function dissect(tvb, pinfo, tree, first)
	pinfo.cols.protocol:set("RPC/RDMA")
	local root = tree:add(p, tvb())
	local info = { first = first }
	local ok, e = pcall(dissect_header, tvb, pinfo, tree, root, info)
	if not ok and type(e) == "table" and e.split then
		root:add_proto_expert_info(ex_note, e.split .. " is in the" ..
			" next packets of this Send, which are not reassembled")
		info[#info + 1] = "[first packet of a Send]"
	elseif not ok then
		local why = type(e) == "table" and e.malformed or
			("decoder failure: " .. tostring(e))
		root:add_proto_expert_info(ex_malformed, why)
		info[#info + 1] = "[Malformed]"
	end
	-- The RPC dissector, if it ran, wrote its own summary: ours goes first.
	local text = table.concat(info, " ")
	if info.rpc then
		pinfo.cols.info:prepend(text .. "; ")
	else
		pinfo.cols.info:set(text)
	end
	return tvb:len()
end

function p.dissector(tvb, pinfo, tree)
	return dissect(tvb, pinfo, tree, false)
end

-- The heuristic claims the first or only packet of a Send whose second
-- word is a version we decode (V1-HDR-1: rdma_vers is at offset 4 in every
-- version), or any RDMA_ERROR/ERR_VERS, whose layout is fixed for all
-- versions (V1-EXT-2).  Twelve octets are enough to claim a truncated
-- header and mark it.  In the First packet of a split Send, a header that
-- goes on past the packet is a note, not malformed.
local function heuristic(tvb, pinfo, tree)
	local len = tvb:len()
	local fi = f_bth_opcode()
	local op = fi and fi.value % 32
	if op and op ~= SEND_FIRST and not SEND_WHOLE[op] then
		return false
	end
	if len < 12 then
		return false
	end
	local vers = tvb(4, 4):uint()
	local claim = vers == 1 or vers == 2
	if not claim and len >= 20 then
		claim = tvb(12, 4):uint() == 4 and tvb(16, 4):uint() == 1
	end
	if not claim then
		return false
	end
	dissect(tvb, pinfo, tree, op == SEND_FIRST)
	return true
end

p:register_heuristic("infiniband.payload", heuristic)
