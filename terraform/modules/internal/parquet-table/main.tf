# A Glue table over Parquet files, with the storage descriptor Athena
# documents for Parquet: the Hive Parquet input and output formats and
# ParquetHiveSerDe (https://docs.aws.amazon.com/athena/latest/ug/parquet-serde.html).
# The pipeline's allocation table and bill-export's CUR 2.0 table are both
# one; they differ only in columns, partitions and parameters.

resource "aws_glue_catalog_table" "this" {
  name          = var.name
  database_name = var.database_name
  description   = var.description
  table_type    = "EXTERNAL_TABLE"

  parameters = merge({
    EXTERNAL       = "TRUE"
    classification = "parquet"
  }, var.parameters)

  storage_descriptor {
    location      = var.location
    input_format  = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
    output_format = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"

    ser_de_info {
      name                  = "parquet"
      serialization_library = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
      parameters = {
        "serialization.format" = "1"
      }
    }

    dynamic "columns" {
      for_each = var.columns
      content {
        name = columns.value.name
        type = columns.value.type
      }
    }
  }

  dynamic "partition_keys" {
    for_each = var.partition_keys
    content {
      name = partition_keys.value.name
      type = partition_keys.value.type
    }
  }
}
