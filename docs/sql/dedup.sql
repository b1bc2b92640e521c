-- First occurrences of each id over the whole stream, sharded into 16 partitions.
CREATE TABLE ids (id STRING) WITH (
  'connector' = 'filesystem', 'format' = 'raw', 'path' = 'testdata/dedup/ids.txt');

CREATE TEMPORARY VIEW sharded AS SELECT id, BLOOM_SHARD(id, 16) AS shard FROM ids;

SELECT COUNT(*) AS ids, COUNT(DISTINCT id) AS distinct_ids FROM ids;

SELECT COUNT(*) AS firsts, COUNT(DISTINCT id) AS distinct_firsts
FROM BLOOM_DEDUP(input => TABLE sharded PARTITION BY shard, id_column => 'id',
                 expected_items => 1000, fpp => 0.01);
