-- Distinct users per busy page: Bloom estimate beside Flink's exact COUNT(DISTINCT).
CREATE TABLE clicks (ts BIGINT, `user` STRING, page STRING) WITH (
  'connector' = 'filesystem', 'format' = 'json', 'path' = 'testdata/count/clicks.jsonl');

SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01) AS users, COUNT(DISTINCT `user`) AS exact
FROM clicks GROUP BY page HAVING COUNT(*) > 1500;
