-- Small compressed blocks for the tables the lists read a few keys of (issue 13;
-- bench/analytics/RESULTS.md, "Point reads"). A page of 25 visitors reads their rows of
-- visitor_hours, their contacts in visitors and their companies' names in companies; each key's
-- rows are a few hundred bytes, but the engine decompresses the whole block holding them, 64 KB
-- to 1 MB by default. Blocks of 4-16 KB, as contacts already have (0007), measured at 10 M page
-- views: a page's figures 15.3 -> 7.9 ms, its contacts 10.0 -> 5.9 ms, its companies' profiles
-- 8.0 -> 4.5 ms; scans of whole ranges the same (43.5 against 45.0 ms), 4-12 % more bytes on
-- disk. company_hours (reads whole companies' runs: 8.1 -> 7.4 ms) and icp_scores (no change)
-- keep theirs.
--
-- The setting applies to parts written from now on: OPTIMIZE ... FINAL writes the existing rows
-- anew (a few seconds at 10 M page views, about a minute at 100 M; the tables stay readable).
ALTER TABLE {{local:visitor_hours}} {{on_cluster}} MODIFY SETTING min_compress_block_size = 4096, max_compress_block_size = 16384;
ALTER TABLE visitors {{on_cluster}} MODIFY SETTING min_compress_block_size = 4096, max_compress_block_size = 16384;
ALTER TABLE companies {{on_cluster}} MODIFY SETTING min_compress_block_size = 4096, max_compress_block_size = 16384;
OPTIMIZE TABLE {{local:visitor_hours}} {{on_cluster}} FINAL;
OPTIMIZE TABLE visitors {{on_cluster}} FINAL;
OPTIMIZE TABLE companies {{on_cluster}} FINAL;
